// The route table of a service (the admin service by default; the client port passes its own public
// routes, refusals and credentials) walked with every spelling of every path: built from the routes
// the server registers (never a hand-written list), so a route added anywhere is walked too.
// Each spelling goes out with bad credentials only; every answer must be a refusal unless the route
// is one of the few meant to be public, and nothing may change.

import type { RegisteredRoute } from '../../services/admin/admin-server.js';
import type { RawAnswer, RawHttp } from './raw-http.js';

/** The routes meant to answer without a token (request-guard.ts), as METHOD path. */
export const PUBLIC_ROUTES = new Set(['GET /healthz', 'HEAD /healthz', 'GET /readyz', 'HEAD /readyz', 'GET /metrics', 'HEAD /metrics', 'GET /*', 'HEAD /*', 'GET /', 'HEAD /', 'GET /favicon.ico', 'HEAD /favicon.ico']);

/** What a refused spelling may answer: the code says which refusal, its status must match. */
const REFUSALS: Record<string, number> = {
  admin_token_required: 401,
  admin_token_invalid: 401,
  not_found: 404,
  // The console's files refuse a dot segment themselves.
  forbidden: 403,
  // Absolute-form targets, before any route is looked at.
  absolute_form_refused: 400,
};

export interface ProbeInput {
  routes: Array<Pick<RegisteredRoute, 'method' | 'url'>>;
  http: RawHttp;
  port: number;
  /** A real value for each path parameter (an existing key, a banned account): a leak would act. */
  params: Record<string, string>;
  /** A body each POST route would accept, by route url. */
  bodies: Record<string, unknown>;
  token: string;
  /** Another service's public routes (METHOD path); default the admin service's. */
  publicRoutes?: ReadonlySet<string>;
  /** Another service's refusal codes and their statuses; default the admin service's. */
  refusals?: Readonly<Record<string, number>>;
  /** Every bad credential to send; default the admin token's near misses. */
  credentials?: Array<Record<string, string>>;
}

/** Every way of writing one path that a careless router or guard might read as another. */
export function spellings(path: string, port: number): string[] {
  const out = new Set<string>([path]);
  const enc = (c: string): string => `%${c.charCodeAt(0).toString(16).padStart(2, '0').toUpperCase()}`;
  for (let i = 1; i < path.length; i++) {
    out.add(path.slice(0, i) + enc(path[i] ?? '') + path.slice(i + 1));
    out.add(path.slice(0, i) + enc(path[i] ?? '').toLowerCase() + path.slice(i + 1));
  }
  out.add([...path].map((c) => (c === '/' ? c : enc(c))).join(''));
  out.add('/' + [...path.slice(1)].map(enc).join(''));
  out.add(path.toUpperCase());
  out.add(path.replace(/[a-z]/, (c) => c.toUpperCase()));
  const slashes = [...path.matchAll(/\//g)].map((m) => m.index);
  for (const i of slashes) {
    const [before, after] = [path.slice(0, i), path.slice(i)];
    out.add(`${before}/${after}`);
    out.add(`${before}/.${after}`);
    out.add(`${before}/x/..${after}`);
    out.add(`${before}/%2e${after}`);
    out.add(`${before}/x/%2e%2e${after}`);
  }
  out.add(`${path}/`);
  out.add(`${path}/.`);
  out.add(`${path}?`);
  out.add(`${path};x`);
  out.add(`${path}#x`);
  out.add(`http://127.0.0.1:${port}${path}`);
  out.add(`HTTP://LOCALHOST:${port}${path}`);
  out.add(`//127.0.0.1:${port}${path}`);
  return [...out];
}

/** Every credential but a good one. */
function badCredentials(token: string): Record<string, string>[] {
  return [
    {},
    { authorization: `Bearer ${token.replace(/.$/, (c) => (c === '0' ? '1' : '0'))}` },
    { authorization: 'Bearer ' },
    { authorization: `Bearer ${token.toUpperCase() === token ? token.toLowerCase() : token.toUpperCase()}` },
    { authorization: `Basic ${Buffer.from(`admin:${token}`).toString('base64')}` },
    { authorization: token },
    { cookie: `token=${token}` },
  ];
}

function concrete(url: string, params: Record<string, string>): string {
  return url.replace(/:(\w+)|\*/g, (whole, name: string | undefined) => params[name ?? '*'] ?? whole);
}

function judge(answer: RawAnswer, isPublic: boolean, refusals: Readonly<Record<string, number>>): string | null {
  if (isPublic && answer.status < 400) return null;
  if (answer.status === 405) return null;
  // HEAD carries no body: its status alone.
  if (answer.body === '') return [400, 401, 403, 404].includes(answer.status) ? null : `answered ${answer.status}`;
  let error: unknown;
  try {
    error = (JSON.parse(answer.body) as { error?: unknown }).error;
  } catch {
    return `answered ${answer.status} with a body that is not JSON`;
  }
  if (typeof error !== 'string' || refusals[error] !== answer.status) return `answered ${answer.status} ${String(error)}`;
  return null;
}

/** Every violation found, as "METHOD target (credential n): what happened"; empty when all refused. */
export async function probeRouteTable(input: ProbeInput): Promise<{ violations: string[]; requests: number }> {
  const violations: string[] = [];
  let requests = 0;
  const credentials = input.credentials ?? badCredentials(input.token);
  const publicRoutes = input.publicRoutes ?? PUBLIC_ROUTES;
  for (const route of input.routes) {
    const isPublic = publicRoutes.has(`${route.method} ${route.url}`);
    const path = concrete(route.url, input.params);
    const body = input.bodies[route.url];
    for (const target of spellings(path, input.port)) {
      for (const method of [...new Set([route.method, 'HEAD', 'OPTIONS'])]) {
        const json = method === route.method && body !== undefined ? JSON.stringify(body) : undefined;
        for (const [n, headers] of credentials.entries()) {
          // HEAD and OPTIONS once without and once with a wrong token: they reach fewer handlers.
          if (method !== route.method && n > 1) continue;
          requests++;
          const answer = await input.http
            .send(method, target, { ...headers, ...(json !== undefined ? { 'content-type': 'application/json' } : {}) }, json)
            .catch((e: unknown): RawAnswer => ({ status: 0, headers: {}, body: String(e) }));
          const problem = judge(answer, isPublic, input.refusals ?? REFUSALS);
          if (problem !== null) violations.push(`${method} ${target} (credential ${n}, route ${route.method} ${route.url}): ${problem}`);
        }
      }
    }
  }
  return { violations, requests };
}
