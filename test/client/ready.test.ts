// The library opens a stream on the relay's `ready` event (DESIGN.md section 6), not on the words of
// a comment; the `: connected` comment of relays older than the event still opens it. Over real
// sockets, against a relay that sends exactly what the test writes (test/client/stream.test.ts
// opens the library against the real relay, which sends both).
import { afterEach, describe, expect, it } from 'vitest';
import { RelayClient } from '../../clients/typescript/src/index.js';
import { HostileRelay, SSE_HEAD, type Handler } from '../helpers/hostile-relay.js';
import { CLIENT_AGENT, Recorder } from '../helpers/relay-client.js';

const CHANNEL = 'play.example.net';
const servers: HostileRelay[] = [];
const clients: RelayClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function fakeRelay(text: string): Promise<HostileRelay> {
  const handler: Handler = (_req, res) => void res.writeHead(200, SSE_HEAD).write(text);
  const s = await HostileRelay.start(handler);
  servers.push(s);
  return s;
}

/** A client whose watchdog is short: a stream it does not see as open is dropped soon, and retried. */
function client(url: string): { client: RelayClient; rec: Recorder } {
  const c = new RelayClient({ url, clientId: 'ready-test-id', clientSecret: 'ready-test-secret', userAgent: CLIENT_AGENT, server: CHANNEL, token: () => 'session-token', watchdogMs: 300, backoff: { baseMs: 50, capMs: 100 } });
  clients.push(c);
  return { client: c, rec: new Recorder(c) };
}

describe('the library opens on the ready event', () => {
  it('a relay that says ready and no connected comment: the stream is open, and connect() resolves', async () => {
    const fake = await fakeRelay(`retry: 2000\n\nevent: ready\ndata: {"channel":"${CHANNEL}","resumedAfter":null,"retryMs":2000}\n\n`);
    const { client: c, rec } = client(fake.url);
    await c.connect();
    expect(c.state).toEqual({ state: 'open', resumedFrom: null });
    expect(rec.names()).toEqual(['connecting', 'open']);
  });

  it('a relay older than the ready event (the connected comment alone) still opens the stream', async () => {
    const fake = await fakeRelay(`retry: 2000\n\n: connected to ${CHANNEL}\n\n`);
    const { client: c } = client(fake.url);
    await c.connect();
    expect(c.state).toEqual({ state: 'open', resumedFrom: null });
  });

});
