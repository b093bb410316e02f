// What the reproducers start: a nats-server (the local binary), the relay on the client port with a
// fake profile API, and/or the admin service, each on a free loopback port, with environment
// overrides. Every reproducer stops what it started in a finally.

import { connect, type Socket } from 'node:net';
import { startAdmin, type AdminFixture } from '../../test/helpers/admin.js';
import { startTestNats, type TestNats } from '../../test/helpers/nats.js';
import { RelayFixture } from '../../test/helpers/relay.js';

process.env['RELAY_TEST_NO_CONTAINERS'] = '1';

export interface Stack {
  nats: TestNats;
  admin?: AdminFixture;
  relay?: RelayFixture;
  stop(): Promise<void>;
}

export async function startStack(what: { admin?: Record<string, string>; relay?: Record<string, string> }): Promise<Stack> {
  const nats = await startTestNats();
  const stack: Stack = {
    nats,
    async stop() {
      await stack.admin?.close().catch(() => undefined);
      await stack.relay?.close().catch(() => undefined);
      await nats.stop();
    },
  };
  try {
    if (what.admin !== undefined) stack.admin = await startAdmin(nats, ['alice'], what.admin);
    if (what.relay !== undefined) stack.relay = await RelayFixture.start({ nats, env: what.relay });
  } catch (e) {
    await stack.stop();
    throw e;
  }
  return stack;
}

export interface Raw {
  socket: Socket;
  text(): string;
  closed: Promise<void>;
  isClosed(): boolean;
}

/** A socket from `from` to 127.0.0.1:`port`, `first` written once connected. */
export function raw(port: number, first = '', from = '127.0.0.1', host = '127.0.0.1'): Promise<Raw> {
  return new Promise((resolve, reject) => {
    let text = '';
    let done = false;
    let connected = false;
    const socket = connect({ port, host, localAddress: from }, () => {
      connected = true;
      if (first !== '') socket.write(first);
      resolve({ socket, text: () => text, closed, isClosed: () => done });
    });
    const closed = new Promise<void>((r) =>
      socket.once('close', () => {
        done = true;
        // Reset before the connection completed: no error event may come, say so.
        if (socket.connecting || !connected) reject(new Error('closed before connected'));
        r();
      }),
    );
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.on('error', (e) => (socket.connecting ? reject(e) : undefined));
  });
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** One request alone on a fresh connection from 127.0.0.1; the status line, or why there was none. */
export async function askFresh(port: number, target: string, headers: Record<string, string> = {}, timeoutMs = 3000): Promise<string> {
  const lines = Object.entries({ host: '127.0.0.1', ...headers, connection: 'close' }).map(([k, v]) => `${k}: ${v}\r\n`);
  let r: Raw;
  try {
    r = await raw(port, `GET ${target} HTTP/1.1\r\n${lines.join('')}\r\n`);
  } catch (e) {
    return `connect failed: ${e instanceof Error ? e.message : String(e)}`;
  }
  await Promise.race([r.closed, sleep(timeoutMs)]);
  r.socket.destroy();
  const status = r.text().split('\r\n')[0] ?? '';
  return status === '' ? 'no answer (reset or closed without a byte)' : status;
}
