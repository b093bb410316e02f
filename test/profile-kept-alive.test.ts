// The profile API closes a kept-alive connection it found idle; when that close crosses the relay's
// next look-up on the same socket, the look-up is asked again on a new connection instead of
// refusing the player with 503 (seen once in CI as a ban check answered "profile_api_unavailable").

import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ProfileHttp } from '../services/core/profile-http.js';

let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** A profile API that drops a connection, unanswered, at its `dropAt`-th request (1 = the first). */
async function apiDroppingAt(dropAt: number): Promise<{ url: string; asked: () => number }> {
  const seen = new WeakMap<Socket, number>();
  let asked = 0;
  const api = createServer((req, res) => {
    asked++;
    const n = (seen.get(req.socket) ?? 0) + 1;
    seen.set(req.socket, n);
    if (n === dropAt) return void req.socket.destroy();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: '0123456789abcdef0123456789abcdef', name: 'Steve' }));
  });
  server = api;
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(api.address() as AddressInfo).port}/profile`, asked: () => asked };
}

describe('profile look-ups over a kept-alive connection', () => {
  it('a connection the API closes as it is reused is asked again on a new one, and the player is answered', async () => {
    const api = await apiDroppingAt(2);
    const http = new ProfileHttp(api.url, 4);
    expect((await http.get('token-1', 5_000)).status).toBe(200);
    const second = await http.get('token-2', 5_000);
    expect([second.status, (JSON.parse(second.body) as { name: string }).name]).toEqual([200, 'Steve']);
    expect(api.asked()).toBe(3);
  });

  it('a fresh connection the API drops is not asked twice: the look-up fails as unreachable', async () => {
    const api = await apiDroppingAt(1);
    const http = new ProfileHttp(api.url, 4);
    await expect(http.get('token-1', 5_000)).rejects.toThrow(/socket hang up|ECONNRESET/);
    expect(api.asked()).toBe(1);
  });
});
