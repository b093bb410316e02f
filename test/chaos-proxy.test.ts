// The fault campaign's TCP proxy (tools/chaos/tcp-proxy.ts), against a real echo server on loopback:
// each mode does to a connection what its network fault would, and no mode loses or reorders a byte
// of a connection that survives it.
import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TcpProxy } from '../tools/chaos/tcp-proxy.js';

let echo: Server;
let proxy: TcpProxy;
const sockets: Socket[] = [];

beforeEach(async () => {
  echo = createServer((s) => {
    s.on('error', () => undefined);
    s.pipe(s);
  });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  const { port } = echo.address() as { port: number };
  proxy = new TcpProxy('test', { host: '127.0.0.1', port });
  await proxy.listen();
});

afterEach(async () => {
  for (const s of sockets) s.destroy();
  await proxy.close();
  await new Promise<void>((resolve) => echo.close(() => resolve()));
});

/** A client through the proxy that collects what comes back and says how its connection ended. */
function client(): { socket: Socket; received: () => string; until: (text: string) => Promise<void>; ended: Promise<string> } {
  const socket = connect(proxy.port, '127.0.0.1');
  sockets.push(socket);
  let text = '';
  const waiters: Array<{ text: string; resolve: () => void }> = [];
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString();
    for (const w of [...waiters]) if (text.includes(w.text)) w.resolve();
  });
  const ended = new Promise<string>((resolve) => {
    socket.on('error', (e) => resolve(`error ${(e as NodeJS.ErrnoException).code ?? e.message}`));
    socket.on('close', () => resolve('closed'));
  });
  return {
    socket,
    received: () => text,
    until: (wanted) => (text.includes(wanted) ? Promise.resolve() : new Promise((resolve) => waiters.push({ text: wanted, resolve }))),
    ended,
  };
}

describe('TcpProxy', () => {
  it('passes bytes both ways, in order', async () => {
    const c = client();
    const sent = Array.from({ length: 200 }, (_, i) => `line ${i}\n`).join('');
    c.socket.write(sent);
    await c.until('line 199\n');
    expect(c.received()).toBe(sent);
  });

  it('cut: open connections are reset, new ones too, and healing lets new ones through', async () => {
    const c = client();
    c.socket.write('hello');
    await c.until('hello');
    proxy.set({ kind: 'cut' });
    expect(await c.ended).toMatch(/^(error ECONNRESET|closed)$/);
    const during = client();
    expect(await during.ended).toMatch(/^(error ECONNRESET|closed)$/);
    proxy.heal();
    const after = client();
    after.socket.write('again');
    await after.until('again');
  });

  it('blackhole: nothing passes and nothing closes; healed, the held bytes arrive whole and in order', async () => {
    const c = client();
    c.socket.write('before;');
    await c.until('before;');
    proxy.set({ kind: 'blackhole' });
    const late = client();
    late.socket.write('late;');
    for (let i = 0; i < 50; i++) c.socket.write(`held ${i};`);
    // A sentinel through a healthy path proves time passed without anything arriving here.
    const control = new TcpProxy('control', proxy.target);
    await control.listen();
    const probe = connect(control.port, '127.0.0.1');
    probe.on('error', () => undefined);
    sockets.push(probe);
    probe.write('ping');
    await new Promise<void>((resolve) => probe.once('data', () => resolve()));
    await control.close();
    expect(c.received()).toBe('before;');
    expect(late.received()).toBe('');
    proxy.heal();
    await c.until('held 49;');
    expect(c.received()).toBe('before;' + Array.from({ length: 50 }, (_, i) => `held ${i};`).join(''));
    await late.until('late;');
  });

  it('slow: every chunk arrives at least the delay later, in order', async () => {
    proxy.set({ kind: 'slow', delayMs: 150 });
    const c = client();
    await new Promise<void>((resolve) => c.socket.once('connect', () => resolve()));
    const started = Date.now();
    c.socket.write('one;');
    setTimeout(() => c.socket.write('two;'), 20);
    await c.until('two;');
    // Through the proxy twice (there and back): two delays.
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(c.received()).toBe('one;two;');
  });
});
