// A stream's connection once its head is out: the socket has left Node's HTTP server
// (services/gateway/stream/bare-socket.ts), and what the server did with the connection is now done
// on the socket. Real nats-server, real profile API server, raw sockets.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedKey } from '../services/core/keys.js';
import { waitUntil as eventually } from '../tools/poll.js';
import { readMetrics } from './helpers/metrics.js';
import { RelayFixture } from './helpers/relay.js';

let relay: RelayFixture;
let key: CreatedKey;
let n = 0;
const channel = (): string => `bare-${++n}.example.net`;

beforeAll(async () => {
  // Posts are not rate limited here: a test fills a client's socket with frames.
  relay = await RelayFixture.start({ env: { RATE_LIMIT_PER_SECOND: '0', RATE_LIMIT_BYTES_PER_SECOND: '0' } });
  key = await relay.createKey();
});
afterAll(async () => {
  await relay?.close();
});

interface RawStream {
  socket: Socket;
  /** The relay's side of the same connection. */
  relaySide: Socket;
  text: () => string;
  /** The relay ended its side of the connection. */
  ended: Promise<void>;
}

function streamRequest(headers: Record<string, string>, on = relay): string {
  const url = new URL(on.url);
  const lines = ['GET / HTTP/1.1', `host: ${url.host}`, 'accept: text/event-stream', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  return lines.join('\r\n') + '\r\n\r\n';
}

/**
 * Writes `first` on a raw connection whose side stays open until the test ends it (allowHalfOpen),
 * so what the relay does with its own side shows.
 */
async function rawStream(first: string, on = relay): Promise<RawStream> {
  const url = new URL(on.url);
  const server = on.server.app.server;
  const socket = connect({ host: url.hostname, port: Number(url.port), allowHalfOpen: true });
  const relaySide = new Promise<Socket>((resolve) => {
    const seen = (s: Socket): void => {
      if (s.remotePort !== socket.localPort) return;
      server.off('connection', seen);
      resolve(s);
    };
    server.on('connection', seen);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let text = '';
  socket.on('data', (c: Buffer) => (text += c.toString('utf8')));
  socket.on('error', () => undefined);
  const ended = new Promise<void>((resolve) => socket.once('end', () => resolve()));
  socket.write(first);
  return { socket, relaySide: await relaySide, text: () => text, ended };
}

/** The relay closed its socket of the connection (not only its sending side). */
function relayClosed(s: RawStream): Promise<void> {
  return s.relaySide.destroyed ? Promise.resolve() : new Promise((resolve) => s.relaySide.once('close', () => resolve()));
}

async function greeted(s: RawStream): Promise<void> {
  // An open is a session check and two bucket round trips: seconds on a CI machine running other
  // test files at once (10 s ran out once), so 20 s, with what did arrive in the failure.
  await eventually(() => s.text().includes(': connected'), 'the stream to be greeted', { timeoutMs: 20_000, detail: () => JSON.stringify(s.text().slice(0, 600)) });
}

async function openStreams(): Promise<number> {
  return (await readMetrics(relay.url)).get('relay_streams_open') ?? 0;
}

describe("a stream's connection after its head", () => {
  it('carries frames posted after the head to the client', async () => {
    const ch = channel();
    const s = await rawStream(streamRequest(relay.headers(relay.player(), key, ch)));
    await greeted(s);
    await relay.post({ type: 'chat', message: 'on the bare socket' }, relay.headers(relay.player(), key, ch));
    await eventually(() => s.text().includes('on the bare socket'), 'the frame to arrive');
    s.socket.destroy();
    await eventually(async () => (await openStreams()) === 0, 'the stream to end');
  });

  it('is cut when the client sends anything after its request, and the stream is forgotten', async () => {
    const ch = channel();
    const player = relay.player();
    const s = await rawStream(streamRequest(relay.headers(player, key, ch)));
    await greeted(s);
    expect(await openStreams()).toBe(1);
    // A second request on the stream's connection: nothing reads it, so the connection ends.
    s.socket.write(streamRequest(relay.headers(player, key, ch)));
    await relayClosed(s);
    await eventually(async () => (await openStreams()) === 0, 'the stream to end');
    // Its claim went with it: the account opens the channel again without evicting anything.
    const again = await relay.connect(relay.headers(player, key, ch));
    await relay.post({ type: 'chat', message: 'after' }, relay.headers(relay.player(), key, ch));
    expect((await again.nextPair()).data['message']).toBe('after');
    again.close();
    await again.ended;
  });

  it('ends when the client closes its side of the connection, and the relay closes its own', async () => {
    const s = await rawStream(streamRequest(relay.headers(relay.player(), key, channel())));
    await greeted(s);
    s.socket.end();
    await s.ended;
    await relayClosed(s);
    await eventually(async () => (await openStreams()) === 0, 'the stream to end');
  });

  it('is closed by the relay after its close frames even when the client keeps its side open', async () => {
    const ch = channel();
    const player = relay.player();
    const first = await rawStream(streamRequest(relay.headers(player, key, ch)));
    await greeted(first);
    // The same account on the same channel again: the first stream is evicted.
    const second = await relay.connect(relay.headers(player, key, ch));
    await first.ended;
    // The relay's socket is gone, though the client never ended its side.
    await relayClosed(first);
    expect(first.socket.destroyed).toBe(false);
    expect(first.text()).toContain('event: close');
    expect(first.text()).toContain('"reason":"evicted"');
    first.socket.destroy();
    second.close();
    await second.ended;
    await eventually(async () => (await openStreams()) === 0, 'the streams to end');
  });

  it('lets go of a client evicted while it was not reading: the relay closes its socket, and what waited for it goes', async () => {
    const ch = channel();
    const player = relay.player();
    const first = await rawStream(streamRequest(relay.headers(player, key, ch)));
    await greeted(first);
    first.socket.pause();
    // Frames until the relay's side of the connection holds what the client does not read.
    const chats = Array.from({ length: 10 }, () => ({ type: 'chat', message: 'q'.repeat(30_000) }));
    const sender = relay.headers(relay.player(), key, ch);
    for (let i = 0; i < 200 && first.relaySide.writableLength === 0; i++) await relay.post(chats, sender);
    expect(first.relaySide.writableLength).toBeGreaterThan(0);
    for (let i = 0; i < 5; i++) await relay.post(chats, sender);
    const second = await relay.connect(relay.headers(player, key, ch));
    // Before, only a slow consumer's socket was closed at the grace's end: an evicted (banned,
    // revoked, drained) client that never read held its socket and up to STREAM_QUEUE_MAX_BYTES.
    await relayClosed(first);
    first.socket.destroy();
    second.close();
    await second.ended;
  });

  it('is ended by a shutdown at SHUTDOWN_TIMEOUT while its client reads nothing', async () => {
    // Guards: the socket has left the HTTP server's list of connections, so the server's own "close
    // every connection" at the deadline no longer reaches it; a client that read nothing then held
    // a shutting-down relay for the close grace of the stream's socket (5 s).
    const own = await RelayFixture.start({ nats: relay.nats, profile: relay.profile, env: { SHUTDOWN_TIMEOUT: '500ms', RATE_LIMIT_PER_SECOND: '0', RATE_LIMIT_BYTES_PER_SECOND: '0' } });
    const ch = channel();
    const s = await rawStream(streamRequest(own.headers(own.player(), key, ch), own), own);
    await greeted(s);
    s.socket.pause();
    const chats = Array.from({ length: 10 }, () => ({ type: 'chat', message: 'q'.repeat(30_000) }));
    const sender = own.headers(own.player(), key, ch);
    for (let i = 0; i < 200 && s.relaySide.writableLength === 0; i++) await own.post(chats, sender);
    expect(s.relaySide.writableLength).toBeGreaterThan(0);
    const started = Date.now();
    await own.close();
    expect(s.relaySide.destroyed).toBe(true);
    // The deadline, not the socket's own grace, ended it.
    expect(Date.now() - started).toBeLessThan(3000);
    s.socket.destroy();
  });

  it('warns of nothing when a client sends many stream requests together on one connection', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(w.message);
    process.on('warning', onWarning);
    try {
      const s = await rawStream(streamRequest(relay.headers(relay.player(), key, channel())).repeat(12));
      await greeted(s);
      s.socket.destroy();
      await relayClosed(s);
      await eventually(async () => (await openStreams()) === 0, 'the stream to end');
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).toEqual([]);
  });

  it('still works when the client sent a second request together with the first (it stays on the HTTP server)', async () => {
    const ch = channel();
    const player = relay.player();
    const head = streamRequest(relay.headers(player, key, ch));
    const s = await rawStream(head + head);
    await greeted(s);
    await relay.post({ type: 'chat', message: 'pipelined' }, relay.headers(relay.player(), key, ch));
    await eventually(() => s.text().includes('pipelined'), 'the frame to arrive');
    s.socket.destroy();
    await relayClosed(s);
    await eventually(async () => (await openStreams()) === 0, 'the stream to end');
  });
});
