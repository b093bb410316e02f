// Sockets a stranger opens and holds, from an address of its own (any 127.x.y.z is a source address
// on loopback): what the connection caps are tested with. A refusal arrives as a reset, so a socket's
// close is awaitable and its error expected.

import { connect, type Socket } from 'node:net';

export interface Held {
  socket: Socket;
  connectedAt: number;
  /** Everything that came back so far (latin1). */
  answer(): string;
  closed: Promise<void>;
}

/** A request's headers begun and never finished. */
export const HALF_SENT = 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n';

/** A socket from `from` to `host:port`, connected and `first` written. */
export function hold(port: number, from: string, first = '', host = '127.0.0.1'): Promise<Held> {
  return new Promise((resolve, reject) => {
    let answer = '';
    const socket = connect({ port, host, localAddress: from }, () => {
      if (first !== '') socket.write(first);
      resolve({ socket, connectedAt: performance.now(), answer: () => answer, closed });
    });
    const closed = new Promise<void>((done) => socket.once('close', () => done()));
    socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    socket.on('error', (e) => (socket.connecting ? reject(e) : undefined));
  });
}

/** `count` sockets from one address, in batches well inside the listen backlog so none waits on a retransmitted SYN (their order is not kept). */
export async function flood(port: number, from: string, count: number, first = HALF_SENT, host?: string): Promise<Held[]> {
  const held: Held[] = [];
  for (let i = 0; i < count; i += 200) {
    held.push(...(await Promise.all(Array.from({ length: Math.min(200, count - i) }, () => hold(port, from, first, host)))));
  }
  return held;
}

/** One after the other: the server meets them in this order. */
export async function inOrder(port: number, from: string, count: number, first = HALF_SENT): Promise<Held[]> {
  const held: Held[] = [];
  for (let i = 0; i < count; i++) held.push(await hold(port, from, first));
  return held;
}

/**
 * One request on a connection of its own, as a client that just arrived makes it (a pooled
 * connection, opened before an attack, would slip past the caps); the status and body that came back.
 */
export async function askAlone(port: number, target: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  const lines = Object.entries({ host: '127.0.0.1', ...headers, connection: 'close' }).map(([k, v]) => `${k}: ${v}\r\n`);
  const req = await hold(port, '127.0.0.1', `GET ${target} HTTP/1.1\r\n${lines.join('')}\r\n`);
  await req.closed;
  const [head = '', body = ''] = req.answer().split('\r\n\r\n', 2);
  if (head === '') throw new Error(`${target}: the connection was closed without an answer`);
  return { status: Number(head.split(' ')[1]), body };
}
