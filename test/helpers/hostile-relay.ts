// For the client library's safety tests: a real HTTP server (node:http, real sockets) that plays a
// broken or hostile relay. Each test hands it a handler; it records every request that reached it
// (method, headers, body, arrival) and lets a test await the n-th one instead of sleeping.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import type { RelayClient } from '../../clients/typescript/src/index.js';

export interface Arrival {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  at: number;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;

export class HostileRelay {
  readonly requests: Arrival[] = [];
  private readonly server: Server;
  private handler: Handler;
  private waiters: Array<{ n: number; resolve: () => void }> = [];

  private constructor(server: Server, handler: Handler) {
    this.server = server;
    this.handler = handler;
  }

  static async start(handler: Handler = (_req, res) => res.writeHead(404).end()): Promise<HostileRelay> {
    const relay: { it: HostileRelay | null } = { it: null };
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const r = relay.it!;
        r.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString(), at: Date.now() });
        const n = r.requests.length;
        r.handler(req, res, n);
        r.waiters = r.waiters.filter((w) => (n >= w.n ? (w.resolve(), false) : true));
      });
    });
    relay.it = new HostileRelay(server, handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return relay.it;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  get gets(): Arrival[] {
    return this.requests.filter((r) => r.method === 'GET');
  }

  handle(handler: Handler): void {
    this.handler = handler;
  }

  /** Resolves once `n` requests have arrived; rejects after `timeoutMs` naming what was awaited. */
  arrived(n: number, what: string, timeoutMs = 10_000): Promise<void> {
    if (this.requests.length >= n) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what} (request ${n}; ${this.requests.length} arrived)`)), timeoutMs);
      this.waiters.push({
        n,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** An SSE answer head, as the relay sends it. */
export const SSE_HEAD = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' } as const;

/** One frame as the relay writes it: the meta event, then the payload with its id. */
export function frame(id: string, message: string): string {
  const meta = JSON.stringify({ uuid: '3f1e8d2a-6b7c-4d5e-9f10-112233445566', agent: null, channel: 'play.example.net' });
  return `event: meta\ndata: ${meta}\n\nid: ${id}\ndata: ${JSON.stringify({ type: 'chat', message })}\n\n`;
}

/**
 * Writes `chunk` to `res` again and again, honouring back-pressure, until `budget` bytes are out or the
 * client goes away. Resolves with the bytes written and whether the client left first.
 */
export function writeForever(res: ServerResponse, chunk: Buffer, budget: number): Promise<{ written: number; clientLeft: boolean }> {
  return new Promise((resolve) => {
    let written = 0;
    let left = false;
    res.on('close', () => {
      left = !res.writableFinished;
      resolve({ written, clientLeft: left });
    });
    const pump = (): void => {
      while (!left && written < budget) {
        written += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      if (!left) res.end();
    };
    pump();
  });
}

/**
 * The servers and clients of one test file, each closed after every test: `server()` starts a
 * hostile relay, and a client pushed on `clients` is closed with it.
 */
export function hostileRelays(): { server: (handler?: Handler) => Promise<HostileRelay>; clients: RelayClient[] } {
  const servers: HostileRelay[] = [];
  const clients: RelayClient[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  const server = async (handler?: Handler): Promise<HostileRelay> => {
    const s = await HostileRelay.start(handler);
    servers.push(s);
    return s;
  };
  return { server, clients };
}
