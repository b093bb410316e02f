// The README's curl walk-through, run against a real relay: what it shows the relay answering and a
// stream starting with must be what they really are (issue 21: it showed {"accepted":1} and a stream
// without its first lines, so a newcomer's terminal did not match the page).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RelayFixture } from './helpers/relay.js';

const CHANNEL = 'play.example.net';
let relay: RelayFixture;

beforeAll(async () => {
  relay = await RelayFixture.start();
});
afterAll(async () => {
  await relay?.close();
});

/** The README's walk-through section, its indented (code) lines only, indentation removed. */
function walkThrough(): string[] {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const start = readme.indexOf('### A walk-through with curl');
  expect(start, 'README has the walk-through').toBeGreaterThan(0);
  const section = readme.slice(start, readme.indexOf('\n## ', start));
  return section.split('\n').filter((l) => l.startsWith('    ')).map((l) => l.slice(4));
}

describe('README walk-through', () => {
  it('shows the POST answer and the first lines of a stream exactly as the relay sends them', async () => {
    const code = walkThrough();
    const shownAnswer = code[code.findIndex((l) => l.includes(`-d '{"type":"chat","message":"hello"}'`)) + 1];
    const shownRetry = code.find((l) => l.startsWith('retry:'));
    const shownGreeting = code.find((l) => l.startsWith(': '));

    const key = await relay.createKey();
    const alice = await relay.connect(relay.headers(relay.player('Alice'), key, CHANNEL));
    const posted = await relay.post({ type: 'chat', message: 'hello' }, relay.headers(relay.player('Bob'), key, CHANNEL));
    expect(posted.status).toBe(200);
    expect(shownAnswer).toBe(JSON.stringify(posted.body));
    expect(shownRetry).toBe(`retry: ${alice.retries[0]}`);
    expect(shownGreeting).toBe(`: ${alice.comments[0]}`);
    // The greeting comes before any event, as the README shows it.
    expect(code.indexOf(shownGreeting!)).toBeLessThan(code.indexOf('event: meta'));
  });
});
