// The library against a hostile relay's stream (issue 19, the client attack report; DESIGN 6 "a
// client never trusts the relay blindly"), over real sockets: only frames that fit the relay's own
// schemas and the stream's channel reach the program, every other one is reported with its id, the
// last id moves only with a delivered frame, a final close stops the client at once, and every
// failure of the stream is retried as what it is.
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { RelayClient, type InvalidFrame, type RelayClientOptions } from '../../clients/typescript/src/index.js';
import { hostileRelays, SSE_HEAD, writeForever, type Handler } from '../helpers/hostile-relay.js';
import { CLIENT_AGENT, Recorder } from '../helpers/relay-client.js';

const { server, clients } = hostileRelays();

const CHANNEL = 'play.example.net';
const META = { uuid: '3f1e8d2a-6b7c-4d5e-9f10-112233445566', agent: 'mod/1', channel: CHANNEL };

/** A player's client (session token, one channel) unless `bridge`: then every channel. */
function client(url: string, extra: Partial<RelayClientOptions> = {}, bridge = false): { client: RelayClient; rec: Recorder; invalid: InvalidFrame[] } {
  const session = bridge ? {} : { server: CHANNEL, token: (): string => 'session-token' };
  const c = new RelayClient({ url, clientId: 'hostile-test-id', clientSecret: 'hostile-test-secret', userAgent: CLIENT_AGENT, backoff: { baseMs: 50, capMs: 100 }, ...session, ...extra });
  clients.push(c);
  const invalid: InvalidFrame[] = [];
  c.on('invalid_frame', (f) => invalid.push(f));
  return { client: c, rec: new Recorder(c), invalid };
}

/** A meta event and its data event, as written by the test (either may be a raw string). */
function pair(meta: object | string, payload: object | string, id?: number): string {
  const text = (v: object | string): string => (typeof v === 'string' ? v : JSON.stringify(v));
  return `event: meta\ndata: ${text(meta)}\n\n${id === undefined ? '' : `id: ${id}\n`}data: ${text(payload)}\n\n`;
}

const chat = (id: number): string => pair(META, { type: 'chat', message: `line ${id}` }, id);
const sse =
  (text: string): Handler =>
  (_req, res) =>
    void res.writeHead(200, SSE_HEAD).write(text);
const ids = (rec: Recorder): Array<string | null> => rec.frames.map((f) => f.id);

describe('the last event id (t1)', () => {
  /** Frames 1 to 3 in one write; a resume gets those after its Last-Event-ID. */
  const replaying: Handler = (req, res) => {
    const after = Number(req.headers['last-event-id'] ?? 0);
    res.writeHead(200, SSE_HEAD).write(': connected\n\n' + [1, 2, 3].filter((i) => i > after).map(chat).join(''));
  };

  it('t1: close() and connect() in a payload listener lose nothing: the resume asks again for the frames not delivered', async () => {
    const relay = await server(replaying);
    const { client: c, rec } = client(relay.url);
    let restarted = false;
    c.on('payload', (f) => {
      if (f.id === '1' && !restarted) {
        restarted = true;
        c.close();
        void c.connect().catch(() => undefined);
      }
    });
    await c.connect();
    await rec.until(() => rec.frames.length === 3, 'frames 1 to 3');
    expect(ids(rec)).toEqual(['1', '2', '3']);
    expect(relay.gets[1]!.headers['last-event-id']).toBe('1');
  });

  it('t1: close() in a payload listener leaves lastEventId at the last frame delivered', async () => {
    const relay = await server(replaying);
    const { client: c, rec } = client(relay.url);
    c.on('payload', () => c.close());
    await c.connect();
    await rec.state('closed');
    expect(ids(rec)).toEqual(['1']);
    expect(c.lastEventId).toBe('1');
  });
});

describe('frames the types say cannot exist (t2, t3, t11)', () => {
  it('t3: a chat without message never reaches a listener (the README pattern payload.message.trim() would throw)', async () => {
    const relay = await server(sse(': connected\n\n' + pair(META, { type: 'chat' }, 1) + chat(2)));
    const { client: c, rec, invalid } = client(relay.url);
    const heard: string[] = [];
    c.on('payload', ({ payload }) => {
      if (payload.type === 'chat' && typeof payload.message === 'string') heard.push(payload.message.trim());
    });
    await c.connect();
    await rec.until(() => rec.frames.length === 1, 'frame 2');
    expect(heard).toEqual(['line 2']);
    expect(invalid).toMatchObject([{ reason: 'invalid_payload', id: '1' }]);
  });

  it('t2: unknown types, bad members, bad meta frames and other channels are reported by id, never delivered', async () => {
    const bad = [
      pair(META, { type: 'evil', x: 1 }, 1),
      pair(META, { type: 'ping', player: META.uuid, position: { x: 1, y: 2, z: 3, dimension: 'mars' } }, 2),
      pair({ uuid: 'not-a-uuid', agent: null, channel: CHANNEL }, { type: 'keepalive' }, 3),
      pair({ uuid: META.uuid, channel: CHANNEL }, { type: 'keepalive' }, 4),
      pair({ ...META, agent: 5 }, { type: 'keepalive' }, 5),
      pair({ ...META, channel: 'other.example.net' }, { type: 'keepalive' }, 6),
      pair(META, '{"type":"presence","inventory":[],"attributes":{"absorption":1e400,"health":1,"hunger":1,"oxygen":1,"saturation":1}}', 7),
    ];
    const relay = await server(sse(': connected\n\n' + bad.join('') + chat(8)));
    const { client: c, rec, invalid } = client(relay.url);
    await c.connect();
    await rec.until(() => rec.frames.length === 1, 'frame 8');
    expect(ids(rec)).toEqual(['8']);
    expect(invalid.map((f) => [f.id, f.reason])).toEqual([
      ['1', 'unknown_type'],
      ['2', 'invalid_payload'],
      ['3', 'invalid_meta'],
      ['4', 'invalid_meta'],
      ['5', 'invalid_meta'],
      ['6', 'other_channel'],
      ['7', 'invalid_payload'],
    ]);
    for (const f of invalid) expect(f.message.length).toBeLessThan(300);
  });

  it('t2: a bridge stream opened without a channel hears every channel; a chat component object is delivered as it is', async () => {
    const relay = await server(sse(': connected\n\n' + pair({ ...META, channel: 'other.example.net' }, { type: 'chat', message: { text: 'hi', extra: [] } }, 1)));
    const { client: c, rec, invalid } = client(relay.url, {}, true);
    await c.connect();
    await rec.until(() => rec.frames.length === 1, 'frame 1');
    expect(rec.frames[0]!.meta.channel).toBe('other.example.net');
    expect(invalid).toEqual([]);
  });

  it('t11: a data event without meta and a meta without channel between two good frames are reported with their ids', async () => {
    const text = ': connected\n\n' + chat(1) + 'id: 2\ndata: {"type":"chat","message":"no meta"}\n\n' + pair({ uuid: META.uuid, agent: null }, { type: 'chat', message: 'x' }, 3) + chat(4);
    const relay = await server(sse(text));
    const { client: c, rec, invalid } = client(relay.url);
    await c.connect();
    await rec.until(() => rec.frames.length === 2, 'frames 1 and 4');
    expect(ids(rec)).toEqual(['1', '4']);
    expect(invalid.map((f) => [f.id, f.reason])).toEqual([
      ['2', 'unpaired_data'],
      ['3', 'invalid_meta'],
    ]);
  });
});

describe('close events (t9, t2)', () => {
  it('t9: after close {banned, reconnect: false} nothing more is delivered and the client ends the stream itself, though the relay keeps it open', async () => {
    let left!: () => void;
    const gone = new Promise<void>((resolve) => (left = resolve));
    const relay = await server((_req, res) => {
      res.on('close', left);
      res.writeHead(200, SSE_HEAD).write(': connected\n\nevent: close\ndata: {"reason":"banned","reconnect":false,"message":"b"}\n\n' + chat(9));
    });
    const { client: c, rec } = client(relay.url);
    await c.connect();
    expect(await rec.state('closed')).toMatchObject({ reason: 'banned' });
    await gone;
    expect(rec.frames).toEqual([]);
    expect(relay.gets).toHaveLength(1);
  });

  it('t9: evicted with reconnect: true is final all the same: the catalogue decides, not the flag', async () => {
    const relay = await server(sse(': connected\n\nevent: close\ndata: {"reason":"evicted","reconnect":true,"retryAfterMs":1000,"message":"x"}\n\n'));
    const { client: c, rec } = client(relay.url);
    await c.connect();
    await rec.until(() => rec.names().some((n) => n === 'closed' || n === 'reconnecting'), 'the close to be acted on');
    expect(rec.names()).toEqual(['connecting', 'open', 'closed']);
    expect(rec.closed()).toMatchObject({ reason: 'evicted' });
  });

  it('t2: a close reason not in the catalogue is unknown_close, the reason kept only as text, an object message not stringified', async () => {
    const relay = await server(sse(': connected\n\nevent: close\ndata: {"reason":"pwned","reconnect":false,"message":{"a":1}}\n\n'));
    const { client: c, rec } = client(relay.url);
    await c.connect();
    const closed = await rec.state('closed');
    expect(closed.reason).toBe('unknown_close');
    expect(closed.error?.body).toEqual({ reason: 'pwned' });
    expect(closed.message).not.toContain('[object Object]');
  });
});

describe('streams that are not what they claim (t7, t11)', () => {
  it('t7: a stream of comments that never says connected fails after watchdogMs and is retried; connect() does not hang', async () => {
    const relay = await server((_req, res) => {
      res.writeHead(200, SSE_HEAD);
      const ping = setInterval(() => res.write(': ping\n\n'), 50);
      res.on('close', () => clearInterval(ping));
    });
    const { client: c, rec } = client(relay.url, { watchdogMs: 300 });
    void c.connect().catch(() => undefined);
    const r = await rec.state('reconnecting', 'a retry after the missing greeting', 5000);
    expect(r.reason).toBe('watchdog_timeout');
    await relay.arrived(2, 'the retry');
  });

  it('t11: an event over 4 MiB is frame_too_large, retried, not network_error', async () => {
    const relay = await server((_req, res: ServerResponse) => {
      res.writeHead(200, SSE_HEAD).write(': connected\n\ndata: ');
      void writeForever(res, Buffer.alloc(64 * 1024, 'A'), 8 * 1024 * 1024);
    });
    const { client: c, rec } = client(relay.url);
    await c.connect();
    const r = await rec.state('reconnecting');
    expect(r.reason).toBe('frame_too_large');
  });

  it('t11: a 204 on the stream (a proxy) is a failure retried with back-off, not the end', async () => {
    const relay = await server((_req, res, n) => (n === 1 ? void res.writeHead(204).end() : void res.writeHead(200, SSE_HEAD).write(': connected\n\n')));
    const { client: c, rec } = client(relay.url);
    await c.connect();
    expect(rec.names()).toEqual(['connecting', 'reconnecting', 'open']);
    expect(rec.states[1]).toMatchObject({ reason: 'invalid_response', error: { status: 204 } });
  });

  it('t11: the content type is checked by media type: text/event-streamXYZ is refused, parameters are allowed', async () => {
    const relay = await server((_req, res, n) =>
      void res.writeHead(200, { 'content-type': n === 1 ? 'text/event-streamXYZ' : 'Text/Event-Stream; charset=utf-8' }).write(': connected\n\n'),
    );
    const { client: c, rec } = client(relay.url);
    await c.connect();
    expect(rec.names()).toEqual(['connecting', 'reconnecting', 'open']);
    expect(rec.states[1]).toMatchObject({ reason: 'invalid_response' });
  });
});
