// The library against a broken or hostile relay (issue 19, DESIGN 6 "a client never trusts the relay
// blindly"), over real sockets: a redirect never carries the credentials to another origin, no advice
// makes a reconnect storm, no body is read without bound, and no id breaks the reconnects.
import { describe, expect, it } from 'vitest';
import { RelayClient, type ClientState, type RelayClientOptions } from '../../clients/typescript/src/index.js';
import { hostileRelays, type HostileRelay, SSE_HEAD, frame, writeForever, type Handler } from '../helpers/hostile-relay.js';
import { CLIENT_AGENT, Recorder } from '../helpers/relay-client.js';

const { server, clients } = hostileRelays();

function client(url: string, extra: Partial<RelayClientOptions> = {}): { client: RelayClient; rec: Recorder } {
  // A bridge: its API key alone authenticates it, so every request carries Client-ID and Client-Secret.
  const c = new RelayClient({ url, clientId: 'hostile-test-id', clientSecret: 'hostile-test-secret', userAgent: CLIENT_AGENT, backoff: { baseMs: 50, capMs: 100 }, ...extra });
  clients.push(c);
  return { client: c, rec: new Recorder(c) };
}

const reconnects = (rec: Recorder): Array<Extract<ClientState, { state: 'reconnecting' }>> =>
  rec.states.filter((s): s is Extract<ClientState, { state: 'reconnecting' }> => s.state === 'reconnecting');

describe('a relay that redirects', () => {
  /** Another origin that would answer like the relay, had anything reached it. */
  async function elsewhere(): Promise<HostileRelay> {
    return server((req, res) => {
      if (req.method === 'POST') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"accepted":1,"dropped":0}');
      res.writeHead(200, SSE_HEAD).write(': connected\n\n');
    });
  }

  it('send(): a 307 to another origin fails with redirect_refused, is not resent, and the other origin receives nothing', async () => {
    const other = await elsewhere();
    const relay = await server((_req, res) => res.writeHead(307, { location: `${other.url}/irc` }).end());
    const { client: c } = client(relay.url, { sendAttempts: 3 });
    await expect(c.send({ type: 'chat', message: 'secret plans' })).rejects.toMatchObject({ code: 'redirect_refused', status: 307 });
    expect(relay.requests).toHaveLength(1);
    expect(relay.requests[0]!.headers['client-secret']).toBe('hostile-test-secret');
    expect(other.requests).toHaveLength(0);
  });

  it('the stream: a 307 on open is a failure retried with back-off, never followed to the other origin', async () => {
    const other = await elsewhere();
    const relay = await server((_req, res) => res.writeHead(307, { location: `${other.url}/irc` }).end());
    const { client: c, rec } = client(relay.url);
    void c.connect().catch(() => undefined);
    await relay.arrived(3, 'the third attempt');
    expect(reconnects(rec).slice(0, 2)).toMatchObject([
      { reason: 'redirect_refused', error: { status: 307 } },
      { reason: 'redirect_refused', error: { status: 307 } },
    ]);
    for (const r of reconnects(rec)) expect(r.delayMs).toBeGreaterThanOrEqual(50);
    expect(other.requests).toHaveLength(0);
  });
});

describe('a relay whose advice would make a reconnect storm', () => {
  // The unluckiest jitter draw (0), so the bound below holds for every draw.
  const BACKOFF = { baseMs: 200, capMs: 400, random: (): number => 0 };
  // Long enough for a storm to show (it made hundreds of GETs per second); no wait is below the base.
  const WINDOW_MS = 1000;
  // Timers may fire a millisecond before Date.now() says they are due.
  const TIMER_SLACK_MS = 5;
  const MAX_GETS = 1 + Math.floor(WINDOW_MS / (BACKOFF.baseMs - TIMER_SLACK_MS));

  const opened = ': connected\n\n';
  const close = (event: Record<string, unknown>): string => `event: close\ndata: ${JSON.stringify({ reason: 'error', message: 'go away', ...event })}\n\n`;
  const sse =
    (text: string): Handler =>
    (_req, res) =>
      res.writeHead(200, SSE_HEAD).end(opened + text);

  it.each([
    ['close {reconnect: true, retryAfterMs: 0}', sse(close({ reconnect: true, retryAfterMs: 0 }))],
    ['close {reconnect: true, retryAfterMs: 1e12} (past Node’s timer limit)', sse(close({ reconnect: true, retryAfterMs: 1e12 }))],
    ['close {reconnect: true, retryAfterMs: "0"} (not a number)', sse(close({ reconnect: true, retryAfterMs: '0' }))],
    ['close {reconnect: true} without a delay', sse(close({ reconnect: true }))],
    ['retry: 0 then a clean end', sse('retry: 0\n\n')],
    ['a clean end without a word', sse('')],
    ['503 with Retry-After: 0', ((_req, res) => res.writeHead(503, { 'retry-after': '0' }).end()) satisfies Handler],
  ] as const)('%s: every wait within [base, cap], and at most 1 + window/base GETs in the window', async (_name, handler) => {
    const relay = await server(handler);
    const { client: c, rec } = client(relay.url, { backoff: BACKOFF });
    void c.connect().catch(() => undefined);
    await relay.arrived(1, 'the first GET');
    const first = relay.gets[0]!.at;
    // Proves an absence (no storm): no event can announce it, so the window is waited out.
    await new Promise((r) => setTimeout(r, WINDOW_MS));
    const inWindow = relay.gets.filter((g) => g.at - first <= WINDOW_MS).length;
    expect(inWindow).toBeLessThanOrEqual(MAX_GETS);
    expect(reconnects(rec).length).toBeGreaterThan(0);
    for (const r of reconnects(rec)) {
      expect(r.delayMs).toBeGreaterThanOrEqual(BACKOFF.baseMs);
      expect(r.delayMs).toBeLessThanOrEqual(BACKOFF.capMs);
    }
  });

  it.each([
    ['Retry-After: 0', '0'],
    ['Retry-After: 999999999 (past Node’s timer limit)', '999999999'],
  ])('send(): a 429 too_many_session_checks with %s is resent as a 503 is, every wait within [base, cap]', async (_name, retryAfter) => {
    const relay = await server((_req, res) =>
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': retryAfter }).end(JSON.stringify({ error: 'too_many_session_checks', message: 'busy address' })),
    );
    const { client: c } = client(relay.url, { backoff: BACKOFF, sendAttempts: 4 });
    await expect(c.send({ type: 'chat', message: 'x' })).rejects.toMatchObject({ code: 'too_many_session_checks', status: 429 });
    expect(relay.requests).toHaveLength(4);
    for (let i = 1; i < relay.requests.length; i++) {
      const waited = relay.requests[i]!.at - relay.requests[i - 1]!.at;
      expect(waited).toBeGreaterThanOrEqual(BACKOFF.baseMs - TIMER_SLACK_MS);
      // The cap, plus a round trip on a loopback socket.
      expect(waited).toBeLessThanOrEqual(BACKOFF.capMs + 250);
    }
  });
});

describe('delays a program sets', () => {
  it.each([
    ['backoff.baseMs below the 50 ms floor', { backoff: { baseMs: 10 } }],
    ['backoff.capMs past an hour (Node fires a timer past 2^31-1 ms at once)', { backoff: { capMs: 1e12 } }],
    ['watchdogMs past an hour', { watchdogMs: 1e12 }],
  ] as const)('%s: refused as misconfigured, before any request', async (_name, bad) => {
    const relay = await server();
    expect(() => client(relay.url, bad)).toThrow(expect.objectContaining({ code: 'misconfigured' }));
    expect(relay.requests).toHaveLength(0);
  });
});

describe('a refusal whose body never ends', () => {
  // Far beyond the 64 KiB the client reads (and beyond the kernel's socket buffers): a client that
  // reads it all lets the server finish; one that stops early leaves first.
  const BUDGET = 32 * 1024 * 1024;
  const CHUNK = Buffer.alloc(16 * 1024, 'x');

  function endless503(): { handler: Handler; result: Promise<{ written: number; clientLeft: boolean }> } {
    let done!: (r: { written: number; clientLeft: boolean }) => void;
    const result = new Promise<{ written: number; clientLeft: boolean }>((r) => (done = r));
    const handler: Handler = (_req, res) => {
      res.writeHead(503, { 'content-type': 'text/plain' });
      void writeForever(res, CHUNK, BUDGET).then(done);
    };
    return { handler, result };
  }

  it('send(): the 503 is reported, and the client stops reading and leaves long before the body ends', async () => {
    const { handler, result } = endless503();
    const relay = await server(handler);
    const { client: c } = client(relay.url, { sendAttempts: 1 });
    await expect(c.send({ type: 'chat', message: 'x' })).rejects.toMatchObject({ code: 'http_error', status: 503 });
    const r = await result;
    expect(r.clientLeft).toBe(true);
    expect(r.written).toBeLessThan(BUDGET);
  });

  it('the stream: the 503 is reported as a reconnect, and the client leaves long before the body ends', async () => {
    const { handler, result } = endless503();
    const relay = await server(handler);
    const { client: c, rec } = client(relay.url);
    void c.connect().catch(() => undefined);
    const reconnecting = await rec.state('reconnecting');
    expect(reconnecting).toMatchObject({ reason: 'http_error', error: { status: 503 } });
    const r = await result;
    expect(r.clientLeft).toBe(true);
    expect(r.written).toBeLessThan(BUDGET);
  });

  it('send(): a 503 whose body stalls is reported as that 503 once the POST deadline passes', async () => {
    const relay = await server((_req, res) => void res.writeHead(503, { 'content-type': 'application/json' }).write('{"error":"unava'));
    const { client: c } = client(relay.url, { sendAttempts: 1, watchdogMs: 300 });
    await expect(c.send({ type: 'chat', message: 'x' })).rejects.toMatchObject({ code: 'http_error', status: 503 });
  });
});

describe('an id the relay would not send', () => {
  it.each([
    ['a character a header cannot carry', '€'],
    ['a space', '12 34'],
    ['a colon after digits', '7:8'],
    ['a region in capitals', 'EU:1'],
    ['a sign', '-1'],
    ['more digits than a 64-bit sequence has', '1'.repeat(21)],
  ])('%s (%s) is ignored: the frame arrives without it, and the reconnect reaches the relay with the last good id', async (_name, bad) => {
    const relay = await server((_req, res, n) => {
      res.writeHead(200, SSE_HEAD);
      if (n === 1) res.end(': connected\n\n' + frame('5', 'good') + frame(bad, 'bad'));
      else res.write(': connected\n\n');
    });
    const { client: c, rec } = client(relay.url);
    await c.connect();
    await relay.arrived(2, 'the reconnect after the stream ended');
    expect(relay.gets[1]!.headers['last-event-id']).toBe('5');
    expect(rec.frames.map((f) => f.id)).toEqual(['5', null]);
    expect(c.lastEventId).toBe('5');
  });

  it("a mesh with regions' id (each region's position) is kept and sent back as it came", async () => {
    const regional = 'eu:1042.us-west:77';
    const relay = await server((_req, res, n) => {
      res.writeHead(200, SSE_HEAD);
      if (n === 1) res.end(': connected\n\n' + frame(regional, 'from two regions'));
      else res.write(': connected\n\n');
    });
    const { client: c, rec } = client(relay.url);
    await c.connect();
    await relay.arrived(2, 'the reconnect after the stream ended');
    expect(rec.frames.map((f) => f.id)).toEqual([regional]);
    expect(relay.gets[1]!.headers['last-event-id']).toBe(regional);
  });
});

describe('an id the relay refuses to resume from (400 invalid_last_event_id)', () => {
  /** Refuses any Last-Event-ID, as a relay of one log refuses a region's id; opens a stream without one. */
  const refusingIds = (first: string): Handler => (req, res, n) => {
    if (req.headers['last-event-id'] !== undefined) {
      return void res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"invalid_last_event_id","message":"Last-Event-ID names positions in regions\' logs, and this relay keeps one log: reconnect without it to start from now."}');
    }
    res.writeHead(200, SSE_HEAD);
    if (n === 1) res.end(': connected\n\n' + first);
    else res.write(': connected\n\n');
  };

  it('one the relay sent: the client opens again without it, as the relay advises, instead of stopping for good', async () => {
    const relay = await server(refusingIds(frame('eu:7', 'before the relay went back to one log')));
    const { client: c, rec } = client(relay.url);
    await c.connect();
    await relay.arrived(3, 'the open without an id after the refusal');
    await rec.until(() => c.state.state === 'open' && relay.gets.length === 3, 'the stream open again');
    expect(relay.gets.map((g) => g.headers['last-event-id'])).toEqual([undefined, 'eu:7', undefined]);
    expect(reconnects(rec).map((s) => s.reason)).toContain('invalid_last_event_id');
    expect(c.state).toEqual({ state: 'open', resumedFrom: null });
    expect(c.lastEventId).toBeNull();
  });

  it('one the program kept (options.lastEventId): the same, on the first open', async () => {
    const relay = await server(refusingIds(''));
    const { client: c, rec } = client(relay.url, { lastEventId: 'eu:5.us:2' });
    await c.connect();
    expect(relay.gets.map((g) => g.headers['last-event-id'])).toEqual(['eu:5.us:2', undefined]);
    expect(rec.names()).not.toContain('closed');
  });
});
