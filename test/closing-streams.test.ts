// Bans, revocations and key expiry close the streams they concern, with a comment naming why.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { RelayFixture } from './helpers/relay.js';

let relay: RelayFixture;
let n = 0;
const channel = (): string => `closing-${++n}.example.net`;

beforeAll(async () => {
  relay = await RelayFixture.start();
});
afterAll(async () => {
  await relay?.close();
});

describe('streams closed by the operator', () => {
  it('relay bans add closes the account’s open streams on every channel, naming the ban; others stay', async () => {
    const key = await relay.createKey();
    const banned = relay.player();
    const bystander = relay.player();
    const [a, b] = [channel(), channel()];
    const onA = await relay.connect(relay.headers(banned, key, a));
    const onB = await relay.connect(relay.headers(banned, key, b));
    const other = await relay.connect(relay.headers(bystander, key, a));
    const r = await runCli(['bans', 'add', banned.uuid, '--reason', 'griefing'], { NATS_URL: relay.nats.url });
    expect(r.code).toBe(0);
    for (const s of [onA, onB]) {
      await s.waitForComment(/banned/);
      await s.waitClosed();
    }
    await relay.post({ type: 'chat', message: 'still open' }, relay.headers(relay.player(), key, a));
    expect((await other.nextPair()).data.message).toBe('still open');
  });

  it('relay keys revoke closes every stream opened with that key', async () => {
    const doomed = await relay.createKey();
    const kept = await relay.createKey();
    const ch = channel();
    const s1 = await relay.connect(relay.headers(relay.player(), doomed, ch));
    const s2 = await relay.connect(relay.headers(relay.player(), doomed, channel()));
    const survivor = await relay.connect(relay.headers(relay.player(), kept, ch));
    const r = await runCli(['keys', 'revoke', doomed.clientId], { NATS_URL: relay.nats.url });
    expect(r.code).toBe(0);
    for (const s of [s1, s2]) {
      await s.waitForComment(/key was revoked/);
      await s.waitClosed();
    }
    await relay.post({ type: 'chat', message: 'after revoke' }, relay.headers(relay.player(), kept, ch));
    expect((await survivor.nextPair()).data.message).toBe('after revoke');
  });

  it('a stream whose key expires while it is open is closed at the expiry', async () => {
    const key = await relay.createKey(undefined, { expiresAt: new Date(Date.now() + 1500).toISOString() });
    const s = await relay.connect(relay.headers(relay.player(), key, channel()));
    await s.waitForComment(/key expired/, 10_000);
    await s.waitClosed();
  });
});
