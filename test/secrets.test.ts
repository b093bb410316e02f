// Session tokens and client secrets never reach a log line or a response body, whatever happens.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Scope } from '../services/core/scopes.js';
import { RelayFixture } from './helpers/relay.js';

let relay: RelayFixture;

beforeAll(async () => {
  // The most talkative level, so anything that could leak is written.
  relay = await RelayFixture.start({ env: { LOG_LEVEL: 'trace', PROFILE_API_TIMEOUT: '300ms' } });
});
afterAll(async () => {
  await relay?.close();
});

describe('secrets', () => {
  it('no token or client secret appears in the logs or in any response body across accepted and refused requests', async () => {
    const key = await relay.createKey();
    const bridge = await relay.createKey([Scope.Unauthenticated, Scope.Establish, Scope.Send, Scope.Receive]);
    const secrets = [key.clientSecret, bridge.clientSecret];
    const bodies: string[] = [];
    const ch = 'secrets.example.net';
    const record = async (p: Promise<{ body: unknown }>): Promise<void> => void bodies.push(JSON.stringify((await p).body));

    const alice = relay.player('Alice');
    const cracked = relay.player('Cracked');
    const outage = relay.player('Outage');
    secrets.push(alice.token, cracked.token, outage.token);

    const stream = await relay.connect(relay.headers(alice, key, ch));
    await record(relay.post({ type: 'chat', message: 'fine' }, relay.headers(alice, key, ch)));
    await stream.nextPair();
    // Refusals of every kind.
    await record(relay.post({ type: 'chat', message: 'x' }, { ...relay.headers(cracked, key, ch), 'client-secret': `${key.clientSecret}x` }));
    secrets.push(`${key.clientSecret}x`);
    await record(relay.post({ type: 'chat', message: 'x' }, relay.headers(relay.player(), null, ch)));
    await record(relay.post({ type: 'nope' }, relay.headers(alice, key, ch)));
    await record(relay.post('{broken', relay.headers(alice, key, ch)));
    await record(relay.post({ type: 'chat', message: 'x' }, { ...relay.headers(null, key, ch), authorization: 'Bearer unknown-session-token-123' }));
    secrets.push('unknown-session-token-123');
    relay.profile.setMode('hang');
    await record(relay.post({ type: 'chat', message: 'x' }, relay.headers(outage, key, ch)));
    relay.profile.setMode('down');
    const refusedStream = await relay.open(relay.headers(relay.player(), key, ch));
    bodies.push(JSON.stringify((await refusedStream.refusal()).body));
    relay.profile.setMode('normal');
    // A bridge, with and without its secret right.
    await record(relay.post([{ user: alice.uuid, agent: 'bridge/1', message: { type: 'chat', message: 'bridged' } }], relay.headers(null, bridge, ch)));
    await record(relay.post([], { ...relay.headers(null, bridge, ch), 'client-secret': 'guess' }));

    expect(bodies.length).toBeGreaterThan(8);
    const logs = relay.logs.text;
    expect(logs.length).toBeGreaterThan(0);
    for (const secret of secrets) {
      expect(logs, `a secret reached the logs`).not.toContain(secret);
      for (const b of bodies) expect(b, `a secret reached a response body`).not.toContain(secret);
    }
    // The log still says what happened, without the secret.
    expect(logs).toMatch(/banned a cracked client/);
  });
});
