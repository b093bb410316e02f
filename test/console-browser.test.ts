// The operator's console in a real browser (Debian's headless Chromium driven by playwright-core),
// against a real relay, nats-server and admin service: signing in, a live tail, keys, bans, the
// audit trail, a wrong token, and the keyboard. UPDATE_SCREENSHOTS=1 writes the pictures
// docs/OPERATIONS.md shows to docs/images/.

import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole } from '../tools/console-build.js';
import { startAdmin, type AdminFixture } from './helpers/admin.js';
import { RelayFixture, type Player } from './helpers/relay.js';
import type { SseStream } from './helpers/sse-client.js';

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
const SHOTS = process.env['UPDATE_SCREENSHOTS'] === '1' ? join(import.meta.dirname, '..', 'docs', 'images') : mkdtempSync(join(tmpdir(), 'console-shots-'));
const CHANNEL = 'play.example.net';
/** Rendering waits: generous, the machine runs other test files at the same time. */
const UI = { timeout: 20_000 };

let relay: RelayFixture;
let admin: AdminFixture;
let browser: Browser;
let page: Page;
let player: Player;
let stream: SseStream;

beforeAll(async () => {
  if (CHROMIUM === undefined) throw new Error('Chromium is missing: apt-get install -y chromium (.ci/run installs it).');
  await buildConsole();
  relay = await RelayFixture.start();
  admin = await startAdmin(relay.nats, ['ops']);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    // No sandbox: CI runs as root in a container-less VM, where Chromium refuses its sandbox.
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
  page = await (await browser.newContext({ viewport: { width: 1280, height: 820 }, colorScheme: 'light' })).newPage();
  // A cold Chromium's first navigation took over 30 s once on a loaded CI machine: take it here,
  // under the setup's longer limit, so no test's own time goes to it.
  await page.goto(admin.url, { timeout: 100_000 });
  // A player on the channel, so the console has a stream to show.
  player = relay.player('Steve');
  stream = await relay.connect(relay.headers(player, await relay.createKey(undefined, { label: 'examplemod 2.1' }), CHANNEL));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await admin?.close();
  await relay?.close();
});

/** A picture of the page; a key's secret is masked even though it is a test's throwaway. */
const shot = (name: string): Promise<Buffer> =>
  page.screenshot({ path: join(SHOTS, `console-${name}.png`), fullPage: true, mask: [page.getByTestId('new-client-secret')] });

describe('the console in a browser', () => {
  it('refuses a wrong token at sign-in and keeps nothing of it', async () => {
    await page.goto(admin.url);
    await page.getByLabel('Admin token').fill('not-the-token-of-this-mesh-at-all');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), UI).toMatch(/not an admin token/);
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    await shot('sign-in');
  });

  it('signs in from the link npm start prints, and removes the token from the address bar', async () => {
    await page.goto('about:blank');
    await page.goto(`${admin.url}/#token=${admin.tokens['ops']!}`);
    await page.getByRole('heading', { name: 'Overview' }).waitFor(UI);
    expect(page.url()).not.toContain(admin.tokens['ops']!);
    await expect.poll(() => page.getByText('signed in as ops').count(), UI).toBe(1);
    // The node table names the relay's node as ready.
    await page.getByRole('row', { name: new RegExp(relay.server.config.nodeId) }).getByText('ready').waitFor(UI);
  });

  it("shows the overview's charts once two samples are in", async () => {
    await page.locator('.chart canvas').first().waitFor({ timeout: 30_000 });
    await shot('overview');
  });

  it('is usable from the keyboard: Tab reaches the navigation and Enter follows it', async () => {
    await page.getByRole('link', { name: 'Overview' }).focus();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Channels' }).waitFor(UI);
    // A new page puts focus on its heading, where a keyboard user starts reading.
    expect(await page.evaluate('document.activeElement?.textContent')).toBe('Channels');
  });

  it('finds the channel, shows its stream, and a live tail receives a chat posted through the ingress', async () => {
    await page.getByLabel('Search').fill('play.example');
    await page.getByRole('link', { name: CHANNEL }).click();
    await page.getByRole('heading', { name: CHANNEL }).waitFor(UI);
    const row = page.getByRole('row', { name: new RegExp(player.uuid) });
    await row.waitFor(UI);
    expect(await row.textContent()).toContain('examplemod 2.1');
    await page.getByRole('form', { name: 'Live tail' }).getByLabel('Types').fill('chat');
    await page.getByRole('button', { name: 'Start tail' }).click();
    await page.getByText('Following: 0 new payloads').waitFor(UI);
    const key = await relay.createKey();
    const bob = relay.player('Bob');
    expect((await relay.post({ type: 'chat', message: 'hello from the ingress' }, relay.headers(bob, key, CHANNEL))).status).toBe(200);
    const tailed = page.getByRole('table', { name: 'Live tail' }).getByRole('row', { name: /hello from the ingress/ });
    await tailed.waitFor(UI);
    expect(await tailed.textContent()).toContain(bob.uuid);
    await shot('channel');
    await page.getByRole('button', { name: 'Stop' }).click();
  });

  // Guards: a link with a broken escape (#/channel/%ZZ) threw while rendering and left a blank page.
  it('a channel link with a broken escape shows "No such channel", and the console goes on working', async () => {
    await page.evaluate("window.location.hash = '#/channel/%ZZ'");
    await page.getByRole('heading', { name: 'No such channel' }).waitFor(UI);
    await page.getByRole('link', { name: 'Channels' }).click();
    await page.getByRole('heading', { name: 'Channels' }).waitFor(UI);
  });

  it('creates a key, shows its secret once, and the key works on the relay', async () => {
    await page.getByRole('link', { name: 'Keys' }).click();
    await page.getByRole('heading', { name: 'Keys' }).waitFor(UI);
    await page.getByText('Create a key').click();
    await page.getByLabel('Label (which build or bridge uses it)').fill('console-made build');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.getByTestId('new-client-secret').textContent({ timeout: UI.timeout })) ?? '';
    const clientId = (await page.getByTestId('new-client-id').textContent()) ?? '';
    expect(secret.length).toBeGreaterThanOrEqual(32);
    await shot('keys');
    const alex = relay.player('Alex');
    expect((await relay.post({ type: 'chat', message: 'made in the console' }, relay.headers(alex, { clientId, clientSecret: secret, scopes: [] }, CHANNEL))).status).toBe(200);
    await page.getByRole('button', { name: 'I have copied it' }).click();
    await page.reload();
    await page.getByRole('row', { name: /console-made build/ }).waitFor(UI);
    expect(await page.content()).not.toContain(secret);
  });

  it("bans a player (closing the player's stream) and lifts the ban", async () => {
    await page.getByRole('link', { name: 'Bans' }).click();
    const form = page.getByRole('form', { name: 'Ban a player' });
    await form.getByLabel('Account UUID').fill(player.uuid);
    await form.getByLabel('Reason').fill('griefing spawn');
    await form.getByRole('button', { name: 'Ban' }).click();
    const row = page.getByRole('row', { name: new RegExp(player.uuid) });
    await row.waitFor(UI);
    expect(await row.textContent()).toContain('admin-api:ops');
    expect((await stream.closeEvent(UI.timeout)).reason).toBe('banned');
    await shot('bans');
    await row.getByRole('button', { name: 'Lift' }).click();
    await page.getByRole('button', { name: `Lift the ban on ${player.uuid}` }).click();
    await page.getByText('Nobody is banned.').waitFor(UI);
  });

  // Found by an attack pass: a record any role may write (a ban it issues, a claim, a heartbeat) was
  // shown as written; a bidi override reordered what the operator read.
  it('a ban record written behind its back, holding a bidi override and an escape sequence, shows them as escapes', async () => {
    const uuid = relay.player('Mallory').uuid;
    const record = { uuid, reason: 'spam\u202e(nimda yb)\u001b[2J', by: 'relay', bannedAt: new Date().toISOString() };
    await relay.server.core.nats.buckets.bans.put(`auto.ingress.${uuid}`, JSON.stringify(record));
    try {
      await page.getByRole('link', { name: 'Bans' }).click();
      const row = page.getByRole('row', { name: new RegExp(uuid) });
      await row.waitFor(UI);
      expect(await row.textContent()).toContain('spam\\u202e(nimda yb)\\x1b[2J');
    } finally {
      await relay.server.core.nats.buckets.bans.delete(`auto.ingress.${uuid}`);
    }
  });

  it('the audit page shows each action of this test, by the signed-in operator', async () => {
    await page.getByRole('link', { name: 'Audit' }).click();
    const table = page.getByRole('table', { name: 'Audit trail' });
    await table.getByRole('row', { name: /ban\.remove/ }).waitFor(UI);
    const rows = (await table.getByRole('row').allTextContents()).slice(1);
    expect(rows.filter((r) => r.includes('admin-api:ops')).map((r) => /(key|ban)\.(create|revoke|add|remove)/.exec(r)?.[0])).toEqual(['ban.remove', 'ban.add', 'key.create']);
    expect(rows.some((r) => r.includes('key.create') && r.includes('console-made build'))).toBe(true);
    await shot('audit');
  });
});

// Issue 21: what a newcomer saw on first use.
describe('the console at first sight', () => {
  it('loads with no error in the browser console, and its favicon (declared, and at /favicon.ico) is served without a token', async () => {
    const fresh = await (await browser.newContext({ viewport: { width: 1280, height: 820 } })).newPage();
    const errors: string[] = [];
    fresh.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())));
    fresh.on('pageerror', (e) => void errors.push(e.message));
    await fresh.goto(`${admin.url}/#token=${admin.tokens['ops']!}`);
    await fresh.getByRole('heading', { name: 'Overview' }).waitFor(UI);
    // Headless Chromium asks for no icon, so the test asks for what a desktop browser would.
    const declared = await fresh.evaluate<string | null>(`document.querySelector('link[rel="icon"]')?.href ?? null`);
    expect(declared).not.toBeNull();
    for (const url of [declared!, `${admin.url}/favicon.ico`]) {
      const icon = await fresh.request.get(url);
      expect(icon.status(), url).toBe(200);
      expect(icon.headers()['content-type'], url).toMatch(/^image\/svg\+xml/);
    }
    expect(errors).toEqual([]);
    await fresh.context().close();
  });

  it("a new page's heading takes the focus without a ring round it, and the keyboard's focus still shows one", async () => {
    // From the keyboard: after a click Chromium never rings a focused heading, after a key press it did.
    await page.getByRole('link', { name: 'Keys' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Keys' }).waitFor(UI);
    await expect.poll(() => page.evaluate<string | undefined>('document.activeElement?.tagName'), UI).toBe('H1');
    expect(await page.evaluate<string>('getComputedStyle(document.activeElement).outlineStyle')).toBe('none');
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string>('getComputedStyle(document.activeElement).outlineStyle')).toBe('solid');
  });

  it('at 420 px wide no page scrolls sideways (tables scroll in their box) and a time stays on one line', async () => {
    await page.setViewportSize({ width: 420, height: 820 });
    try {
      for (const name of ['Overview', 'Channels', 'Keys', 'Bans', 'Audit']) {
        await page.getByRole('link', { name, exact: true }).click();
        await page.getByRole('heading', { name }).waitFor(UI);
        if (name === 'Keys' || name === 'Audit') await page.locator('td.when').first().waitFor(UI);
        await page.screenshot({ path: join(SHOTS, `console-420-${name.toLowerCase()}.png`), fullPage: true });
        const [scroll, inner] = await page.evaluate<[number, number]>('[document.scrollingElement.scrollWidth, innerWidth]');
        expect(scroll, `${name}: page width`).toBeLessThanOrEqual(inner);
        // One line box per time: a wrapped "2030-01-31 12:00:00Z" has two.
        const lines = await page.evaluate<number[]>(
          `[...document.querySelectorAll('td.when')].map((cell) => {
            const range = document.createRange();
            range.selectNodeContents(cell);
            return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
          })`,
        );
        expect(lines.filter((n) => n > 1), `${name}: wrapped times`).toEqual([]);
      }
    } finally {
      await page.setViewportSize({ width: 1280, height: 820 });
    }
  });

  it('the overview charts’ legends show the latest values without a hover, never "--"', async () => {
    await page.getByRole('link', { name: 'Overview', exact: true }).click();
    await page.locator('.chart canvas').first().waitFor({ timeout: 30_000 });
    await page.mouse.move(0, 0);
    const values = page.locator('.chart .u-legend .u-value');
    await expect.poll(() => values.count(), UI).toBeGreaterThan(0);
    expect(await values.allTextContents()).not.toContain('--');
  });
});
