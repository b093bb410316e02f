// Authentication and the order of checks (DESIGN.md section 3, spec 5.3 A1-A4). The first failing
// check answers. A ban is only ever issued for a session the profile API has confirmed.
//
// A User-Agent the text rule refuses (schemas/text.ts) is a 400 invalid_user_agent, answered once the
// key is known good: after the ban of a cracked client (A3 holds whatever agent it sends: a client
// that could dodge its ban by sending a control character would), and before anything is stored or
// a stream is opened. The ban record keeps such an agent, and the client id, as visible escapes.

import type { IncomingHttpHeaders } from 'node:http';
import type { KeyRecord } from '../../schemas/records.js';
import type { BanStore } from './bans.js';
import { credentialHeaders, presentedClientId, readCredentials, type CredentialHeaders } from './credentials.js';
import { escapeControlChars } from './display.js';
import { RelayError } from './errors.js';
import { headerText } from './header-text.js';
import { isIssuedKeyId, type KeyStore } from './keys.js';
import type { Logger } from './logger.js';
import type { ProfileResolver } from './profile.js';
import { ScopeSet } from './scopes.js';
import { readUserAgent, userAgentRefusal } from './user-agent.js';

export interface Principal {
  /** The account behind a verified session; null for a bridge posting without one. */
  uuid: string | null;
  /** That account's profile name (null for a bridge): the published client's meta carries it. */
  name: string | null;
  clientId: string;
  key: KeyRecord;
  scopes: ScopeSet;
  /** The sender's User-Agent (user-agent.ts), null when absent; never one the text rule refuses. */
  agent: string | null;
}

/** Where a ban is reported: the request's logger. */
export interface WarnSink {
  warn(fields: Record<string, unknown>, message: string): void;
}

export interface AuthObserver {
  banIssued(): void;
}

export interface AuthenticatorOptions {
  keys: KeyStore;
  bans: BanStore;
  profiles: ProfileResolver;
  clientHeaderPrefixes: readonly string[];
  logger: Logger;
  observer?: AuthObserver;
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

export class Authenticator {
  private readonly options: AuthenticatorOptions;
  private readonly headerNames: CredentialHeaders;

  constructor(options: AuthenticatorOptions) {
    this.options = options;
    this.headerNames = credentialHeaders(options.clientHeaderPrefixes);
  }

  /**
   * `address` is the client's (client-address.ts): session look-ups are shared fairly between
   * addresses. `log` is the request's own logger, so a ban line carries the request id. `signal` is
   * aborted when the client goes away: a session look-up still waiting is then dropped.
   */
  async authenticate(headers: IncomingHttpHeaders, address: string, log: WarnSink = this.options.logger, signal?: AbortSignal): Promise<Principal> {
    const { keys, bans, profiles } = this.options;
    const agent = readUserAgent(headers);
    // Two different client ids or secrets: 400 conflicting_credentials, thrown here, before any step
    // that could ban (a proxy or a careless client repeating a header is no cracked client).
    const credentials = readCredentials(headers, this.headerNames);
    const authorization = headers.authorization;

    // 1. No session: only a bridge key may go on.
    if (authorization === undefined || authorization.trim() === '') {
      if (credentials !== null) {
        const check = await keys.checkFresh(credentials.clientId, credentials.clientSecret);
        if (check.status === 'ok' || check.status === 'expired' || check.status === 'revoked') {
          const scopes = new ScopeSet(check.key.scopes);
          if (scopes.unauthenticated) {
            if (check.status !== 'ok') throw keyRefusal(check.status);
            refuseAgent(agent);
            return { uuid: null, name: null, clientId: check.key.clientId, key: check.key, scopes, agent };
          }
        }
      }
      throw new RelayError('unauthorized', 'A session token is required: send Authorization: Bearer <game access token>.');
    }

    // 2. The session must be real and current.
    const bearer = BEARER.exec(authorization);
    if (bearer === null) {
      throw new RelayError('invalid_session', 'The Authorization header must be "Bearer <game access token>".');
    }
    // Client credentials rank nothing here: they are public (DESIGN.md section 6). Their verdict is
    // applied at step 4, in order, once the session is known.
    const profile = await profiles.resolve(bearer[1]!, { address, ...(signal !== undefined ? { signal } : {}) });
    const check = credentials === null ? null : await keys.checkFresh(credentials.clientId, credentials.clientSecret);

    // 3. Already banned.
    if (bans.activeBan(profile.uuid) !== undefined) throw banned();

    // 4. A valid session with missing or wrong client credentials is a cracked client (A3).
    if (check === null || check.status === 'unknown' || check.status === 'wrong_secret') {
      const reason =
        check === null ? 'missing client credentials' : check.status === 'unknown' ? 'unknown client id' : 'wrong client secret';
      const clientId = recordableClientId(credentials?.clientId ?? presentedClientId(headers, this.headerNames));
      await bans
        .ban(profile.uuid, {
          reason: `cracked client: ${reason}`,
          by: 'relay',
          ...(clientId !== undefined ? { clientId } : {}),
          ...(agent !== null ? { userAgent: escapeControlChars(agent) } : {}),
        })
        .catch((err: unknown) => {
          // The refusal stands on the next request, once the ban can be written.
          throw new RelayError('unavailable', 'The relay cannot record a decision right now; retry shortly.', { retryAfter: 1, cause: err });
        });
      this.options.observer?.banIssued();
      log.warn({ account: profile.uuid, clientId, reason }, 'banned a cracked client');
      throw banned();
    }

    // 5. Expired, revoked or deleted keys are refused without a ban (A2).
    if (check.status !== 'ok') throw keyRefusal(check.status);
    // 5b. A User-Agent others must not see: 400, never a ban (see the top of this file).
    refuseAgent(agent);

    return {
      uuid: profile.uuid,
      name: profile.name,
      clientId: check.key.clientId,
      key: check.key,
      scopes: new ScopeSet(check.key.scopes),
      agent,
    };
  }
}

/**
 * What a ban record (and its log line) keeps of the client id presented. A client that swapped its
 * id and secret presents its secret as the id: only what looks like an id this relay issues, or a
 * short value such as "undefined", is kept.
 */
function recordableClientId(presented: string | undefined): string | undefined {
  if (presented === undefined) return undefined;
  // Operators read it in `relay bans list` and the admin API: control characters as visible escapes.
  return isIssuedKeyId(presented) || presented.length <= 24 ? escapeControlChars(headerText(presented)) : '(withheld: not a client id this relay issues)';
}

function refuseAgent(agent: string | null): void {
  const refusal = userAgentRefusal(agent);
  if (refusal !== null) throw refusal;
}

function banned(): RelayError {
  return new RelayError('banned', 'This account is banned from the mesh.');
}

/** A key deleted from the bucket is refused as revoked: the relay knew it, so it is no cracked client's. */
function keyRefusal(status: 'expired' | 'revoked' | 'deleted'): RelayError {
  return status === 'expired'
    ? new RelayError('key_expired', 'This API key has expired; the client build needs a new key.')
    : new RelayError('key_revoked', 'This API key has been revoked; the client build needs a new key.');
}

/** Step 6: a scope the request needs and the key lacks (A4: refused plainly, never banned). */
export function missingScope(scope: string, what: string): RelayError {
  return new RelayError('missing_scope', `This API key lacks the scope ${scope}, needed to ${what}.`, {
    extra: { scope },
  });
}

