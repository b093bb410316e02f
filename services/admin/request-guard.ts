// Who may ask what of the admin service, decided once per request, before any handler, on the route
// the router matched, never on how the URL was spelled (`/%61pi/keys` is routed to /api/keys, so it is
// judged as /api/keys). Default deny: this hook is added at the root before any route exists, so it
// runs for every route registered anywhere (in the API plugin, beside it, by another plugin), and a
// route needs a token unless it declares `config.access`. A route that forgets to declare is
// refused, never exposed; the route-table test (test/admin-routes.test.ts) walks every route the
// server registers, with every spelling of its path, to keep it so.
//
// In order: the request line must name a path (an absolute-form target is refused before anything
// reads it); Host must be one this service answers to (a DNS-rebinding page sends its own name);
// a change (POST, PUT, PATCH, DELETE) must not come from a page of another site (Origin,
// Sec-Fetch-Site); then the token, unless the route is public.

import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { parseAuthority, type AllowedHost } from '../core/config/admin-hosts.js';
import { AdminError } from './admin-error.js';
import type { AdminTokens, Operator } from './admin-tokens.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Who may call the route without an admin token. 'public': anyone reaching an allowed Host (the
     * console's own files); 'probe': anyone, whatever the Host (health checks, which orchestrators
     * send to the pod's address). Unset: an admin token.
     */
    access?: 'public' | 'probe';
  }
  interface FastifyRequest {
    /** Who signed in; set before the handler of every route that needs a token. */
    operator: Operator | null;
  }
}

const CHANGES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const DEFAULT_PORT: Record<string, number> = { 'http:': 80, 'https:': 443 };

export interface GuardOptions {
  tokens: AdminTokens;
  allowedHosts: readonly AllowedHost[];
  /** A connection whose request carried an admin token (connection-gate.ts never lets it go). */
  vouch?: (socket: Socket) => void;
}

export function guardRequests(app: FastifyInstance, { tokens, allowedHosts, vouch }: GuardOptions): void {
  app.decorateRequest('operator', null);
  app.addHook('onRequest', async (request, reply) => {
    // Answers about keys, bans and players are nobody's to keep, refusals included; the console's
    // files set their own.
    void reply.header('cache-control', 'no-store');
    if (!(request.raw.url ?? '').startsWith('/')) {
      throw new AdminError('absolute_form_refused', 'The request line must name a path (/api/keys), not a whole URL.');
    }
    // Nothing matched: the not-found answer says so, whoever asks.
    const access = request.is404 ? 'public' : request.routeOptions.config.access;
    if (access !== 'probe' && !hostAllowed(request.headers.host, allowedHosts)) {
      throw new AdminError('host_not_allowed', 'This admin service does not answer to that Host; add it to ADMIN_ALLOWED_HOSTS if it is yours.');
    }
    if (CHANGES.has(request.method) && !sameOrigin(request)) {
      throw new AdminError('origin_not_allowed', 'A page of another site cannot change anything here.');
    }
    // Authority travels only in the Authorization header, never in a cookie, so no other site can
    // make a browser act with it.
    if (access === undefined) {
      request.operator = tokens.operator(request.headers.authorization);
      vouch?.(request.raw.socket);
    }
  });
}

/** The operator of a request that passed the guard; a route without one is a bug, never a blank name. */
export function operatorOf(request: FastifyRequest): Operator {
  if (request.operator === null) throw new Error(`${request.method} ${request.routeOptions.url ?? ''} ran without a signed-in operator.`);
  return request.operator;
}

function hostAllowed(header: string | undefined, allowed: readonly AllowedHost[]): boolean {
  const host = parseAuthority(header ?? '');
  return host !== null && allowed.some((a) => a.host === host.host && (a.port === null || a.port === host.port));
}

/**
 * A browser names the page's origin on every POST and DELETE, and modern ones say whether it is
 * another site. Tools (curl, the CLI) send neither, and carry no ambient authority to abuse.
 */
function sameOrigin(request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  const host = parseAuthority(request.headers.host ?? '');
  if (!URL.canParse(origin) || host === null) return false;
  // "null" (a sandboxed frame, a file) does not parse, and is refused with it.
  const url = new URL(origin);
  const defaultPort = DEFAULT_PORT[url.protocol];
  if (defaultPort === undefined || url.hostname !== host.host) return false;
  const originPort = url.port === '' ? defaultPort : Number(url.port);
  return (host.port ?? defaultPort) === originPort;
}
