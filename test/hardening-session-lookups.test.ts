// Attacks on the session check, which anyone can reach without credentials (client credentials are
// public, DESIGN.md section 6). Real relay, real profile API server (test/helpers/profile-api.ts),
// real sockets from distinct loopback addresses (127.0.0.2 and up).
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil as eventually } from '../tools/poll.js';
import { postFrom } from './helpers/clients.js';
import { readMetrics } from './helpers/metrics.js';
import { RelayFixture } from './helpers/relay.js';

const chat = { type: 'chat', message: 'hello' };

let relay: RelayFixture;
beforeAll(async () => {
  relay = await RelayFixture.start();
});
afterAll(async () => {
  await relay?.close();
});

/** Sends a whole POST from `from`, then destroys the connection once the relay is asking about `token`. */
async function postAndLeave(r: RelayFixture, from: string, token: string): Promise<void> {
  const body = JSON.stringify(chat);
  const req = request(new URL('/', r.url), {
    method: 'POST',
    localAddress: from,
    agent: false,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-irc-multiplayer-server': 'left.example.net' },
  });
  req.on('error', () => undefined);
  req.end(body);
  await eventually(() => r.profile.calls.includes(token), `the relay to ask about ${token}`);
  req.destroy();
}

describe('a POST whose client leaves during the session check (leak.mjs)', () => {
  // Guards: the POST stayed in the in-flight set for ever (memory without bound, no credentials
  // needed), and every drain waited out SHUTDOWN_TIMEOUT for it.
  it('is no longer in flight once its connection closed, and a drain does not wait for it', async () => {
    const own = await RelayFixture.start({ nats: relay.nats });
    try {
      own.profile.setDelay(200);
      const answersBefore = own.profile.calls.length;
      for (let i = 0; i < 3; i++) await postAndLeave(own, '127.0.0.20', `left-during-check-${i}`);
      await own.profile.answered(answersBefore + 3);
      await eventually(async () => (await readMetrics(own.url)).get('relay_posts_in_flight') === 0, 'the in-flight POSTs to be cleared');
      await own.server.ingress!.drain();
    } finally {
      await own.close();
    }
  });
});
