// A small real HTTP server playing the game's profile API: GET with a bearer token answers
// {id, name} (undashed id) for tokens it knows, 401 for others. Tests switch it to failing modes.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ProfileMode = 'normal' | 'down' | 'rate-limited' | 'hang' | 'garbage';

export interface FakeProfileApi {
  url: string;
  /** Registers a session token for a player; returns the dashed lower-case uuid the relay will use. */
  addSession(token: string, name: string, uuid?: string): string;
  revokeSession(token: string): void;
  setMode(mode: ProfileMode): void;
  /** Every answer waits this long first (a slow profile API). */
  setDelay(ms: number): void;
  /** Resolves once this many answers have been sent in all. */
  answered(count: number): Promise<void>;
  /** Requests received so far (each carries the bearer it was asked about). */
  calls: string[];
  close(): Promise<void>;
}

export function randomUuid(): string {
  const hex = [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export async function startProfileApi(): Promise<FakeProfileApi> {
  const sessions = new Map<string, { id: string; name: string }>();
  let mode: ProfileMode = 'normal';
  let delayMs = 0;
  let answers = 0;
  let answerWaiters: Array<{ count: number; resolve: () => void }> = [];
  const calls: string[] = [];
  const hanging = new Set<ServerResponse>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    res.once('finish', () => {
      answers++;
      const ready = answerWaiters.filter((w) => answers >= w.count);
      answerWaiters = answerWaiters.filter((w) => answers < w.count);
      for (const w of ready) w.resolve();
    });
    // Counted when received, not when answered: a test can act while an answer is held back.
    const token = (req.headers.authorization ?? '').replace(/^Bearer\s+/i, '');
    calls.push(token);
    if (delayMs > 0) setTimeout(() => answer(token, res), delayMs);
    else answer(token, res);
  });
  const answer = (token: string, res: ServerResponse): void => {
    if (mode === 'down') return void res.writeHead(503).end('unavailable');
    if (mode === 'rate-limited') return void res.writeHead(429, { 'retry-after': '10' }).end('slow down');
    if (mode === 'hang') return void hanging.add(res);
    if (mode === 'garbage') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"oops":');
    const profile = sessions.get(token);
    if (profile === undefined) {
      return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"UNAUTHORIZED"}');
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...profile, skins: [], capes: [] }));
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/minecraft/profile`,
    calls,
    addSession(token, name, uuid = randomUuid()) {
      sessions.set(token, { id: uuid.replace(/-/g, ''), name });
      return uuid.toLowerCase();
    },
    revokeSession(token) {
      sessions.delete(token);
    },
    setDelay(ms) {
      delayMs = ms;
    },
    answered(count) {
      return answers >= count ? Promise.resolve() : new Promise((resolve) => answerWaiters.push({ count, resolve }));
    },
    setMode(m) {
      mode = m;
      if (m !== 'hang') for (const r of hanging) r.destroy();
    },
    async close() {
      for (const r of hanging) r.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
