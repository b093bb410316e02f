// Starts the admin service for a test against a test's nats-server, with named tokens, its log
// captured; and a fetch that signs requests with one of them.

import { randomBytes } from 'node:crypto';
import { startAdminServer, type AdminOptions, type AdminServer } from '../../services/admin/admin-server.js';
import type { TestNats } from './nats.js';
import { setUpNats } from './nats-setup.js';
import { LogCapture } from './relay.js';

export interface AdminFixture {
  server: AdminServer;
  url: string;
  /** name → token, as ADMIN_TOKENS gives them. */
  tokens: Record<string, string>;
  logs: LogCapture;
  /** fetch as the operator `as` (default: the first token). */
  call(path: string, init?: { method?: string; body?: unknown; token?: string | null; as?: string; headers?: Record<string, string> }): Promise<{ status: number; body: unknown; headers: Headers }>;
  close(): Promise<void>;
}

export async function startAdmin(nats: TestNats, names: string[] = ['alice', 'bob'], env: Record<string, string> = {}, extend?: AdminOptions['extend']): Promise<AdminFixture> {
  // The operator's set-up, unless the test signs in as a NATS role that may not (its own test does it).
  if (env['NATS_USER'] === undefined) await setUpNats(nats.url, env);
  const tokens = Object.fromEntries(names.map((n) => [n, randomBytes(24).toString('hex')]));
  const logs = new LogCapture();
  const server = await startAdminServer({
    env: {
      NATS_URL: nats.url,
      ADMIN_HOST: '127.0.0.1',
      ADMIN_PORT: '0',
      ADMIN_TOKENS: Object.entries(tokens).map(([n, t]) => `${n}=${t}`).join(','),
      LOG_LEVEL: 'info',
      LOG_PRETTY: 'false',
      NODE_ENV: 'test',
      ...env,
    },
    logDestination: logs,
    ...(extend !== undefined ? { extend } : {}),
  });
  const first = names[0] ?? '';
  return {
    server,
    url: server.url,
    tokens,
    logs,
    async call(path, init = {}) {
      const token = init.token === undefined ? tokens[init.as ?? first] : init.token;
      const res = await fetch(server.url + path, {
        method: init.method ?? 'GET',
        headers: {
          ...(token !== null && token !== undefined ? { authorization: `Bearer ${token}` } : {}),
          ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...init.headers,
        },
        ...(init.body !== undefined ? { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) } : {}),
      });
      const text = await res.text();
      let body: unknown = text;
      try {
        body = text === '' ? null : JSON.parse(text);
      } catch {
        // not JSON: the text is the body
      }
      return { status: res.status, body, headers: res.headers };
    },
    close: () => server.close(),
  };
}
