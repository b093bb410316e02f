// Two copies of one account on one server (a player who started the game twice): the relay keeps the
// newer stream and tells the older one `evicted`, which the library takes as final. No ping-pong:
// over a minute the relay sees the two opens and nothing more, and each program knows whether its
// copy lost.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RelayClient } from '../../clients/typescript/src/index.js';
import { readMetrics } from '../helpers/metrics.js';
import { CLIENT_AGENT, Recorder, TestTransport } from '../helpers/relay-client.js';
import { RelayFixture } from '../helpers/relay.js';

let relay: RelayFixture;

beforeAll(async () => {
  relay = await RelayFixture.start();
});
afterAll(async () => {
  await relay?.close();
});

// The window. Nothing announces that no open happens, so the test watches the relay this long.
const WINDOW_MS = 60_000;

describe('RelayClient eviction', () => {
  it('two copies of one account on one server: one open each in a minute, the older copy closed with evicted, the newer open', async () => {
    const key = await relay.createKey();
    const player = relay.player();
    const server = 'evicted.example.net';
    const copy = (): { client: RelayClient; rec: Recorder; transport: TestTransport } => {
      const transport = new TestTransport();
      const client = new RelayClient({
        url: relay.url,
        server,
        clientId: key.clientId,
        clientSecret: key.clientSecret,
        userAgent: CLIENT_AGENT,
        token: () => player.token,
        fetch: transport.fetch,
        // A short back-off: a client that took eviction as a reason to come back would do it often.
        backoff: { baseMs: 200, capMs: 1000 },
      });
      return { client, rec: new Recorder(client), transport };
    };
    const opened = async (): Promise<number> => (await readMetrics(relay.url)).get('relay_streams_opened_total') ?? 0;
    const before = await opened();
    const first = copy();
    const second = copy();
    await first.client.connect();
    await second.client.connect();
    const lost = await first.rec.state('closed', 'the first copy to be evicted');
    expect(lost).toMatchObject({ reason: 'evicted', message: expect.stringMatching(/newest one wins/) });

    await new Promise((r) => setTimeout(r, WINDOW_MS));
    expect((await opened()) - before).toBe(2);
    expect(first.transport.requests).toHaveLength(1);
    expect(second.transport.requests).toHaveLength(1);
    expect(first.rec.names()).toEqual(['connecting', 'open', 'closed']);
    expect(second.rec.names()).toEqual(['connecting', 'open']);
    expect(second.client.state.state).toBe('open');
    second.client.close();
  }, WINDOW_MS + 30_000);
});
