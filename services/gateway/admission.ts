// Admission: a GET becomes the request for a stream, or a refusal (a RelayError the gateway answers).
// The checks in the order the client hears them: draining, Accept, credentials and session (auth.ts
// holds their own order), draining again, the establish scope, the channel, Last-Event-ID, and last
// the account's open rate (STREAM_OPEN_RATE), so only an open that would succeed pays for it. Once
// admitted, the request's headers are dropped: a stream lives for hours and needs none of them.

import type { IncomingMessage } from 'node:http';
import { parseEventId, type EventPosition } from '../../schemas/event-id.js';
import { missingScope, type Authenticator } from '../core/auth.js';
import { requestChannel } from '../core/channel.js';
import { RelayError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { ownerOf } from '../core/owner.js';
import { RateLimiter, type Rate } from '../core/rate-limit.js';
import { Scope } from '../core/scopes.js';
import type { StreamIdentity } from './stream/stream-context.js';

/** What an admitted request asks for. */
export interface StreamRequest {
  identity: StreamIdentity;
  /** Resume after this position (Last-Event-ID: a sequence, or with regions one per region); null for live only. */
  lastEventId: EventPosition | null;
  /** When the key expires (ISO time), closing the stream then; undefined: never. */
  keyExpiresAt: string | undefined;
}

export class Admission {
  private readonly auth: Authenticator;
  private readonly logger: Logger;
  private readonly draining: () => boolean;
  private readonly addressOf: (req: IncomingMessage) => string;
  /**
   * Opens per account (a bridge without a session: per key). Reopening replaces the previous stream,
   * so the stream caps never apply to it, and every open replays what was missed and creates a
   * JetStream consumer: one account reopening with Last-Event-ID: 0 pulled hundreds of MB in seconds.
   */
  private readonly opens: RateLimiter;
  /** The mesh's regions (none without): ids name a position in each region's log. */
  private readonly regions: readonly string[];

  constructor(options: { auth: Authenticator; logger: Logger; draining: () => boolean; addressOf: (req: IncomingMessage) => string; opens: Rate; regions: readonly string[] }) {
    this.auth = options.auth;
    this.regions = options.regions;
    this.opens = new RateLimiter([options.opens]);
    this.addressOf = options.addressOf;
    this.logger = options.logger;
    this.draining = options.draining;
  }

  /** Admits the request, or throws the refusal. Null when the client left during the session check. */
  async admit(req: IncomingMessage, reqId: string, left: AbortSignal): Promise<StreamRequest | null> {
    this.refuseWhileDraining();
    const headers = req.headers;
    const accept = headers.accept;
    if (accept !== undefined && !/text\/event-stream|\*\/\*|text\/\*/i.test(accept)) {
      throw new RelayError('not_acceptable', 'GET opens a Server-Sent Events stream: send Accept: text/event-stream.');
    }
    const warn = { warn: (fields: Record<string, unknown>, message: string) => this.logger.warn({ reqId, ...fields }, message) };
    const principal = await this.auth.authenticate(headers, this.addressOf(req), warn, left);
    if (left.aborted) return null;
    // A drain that began during the session check has already closed every stream it knew of.
    this.refuseWhileDraining();
    if (!principal.scopes.establish) throw missingScope(Scope.Establish, 'open a stream');
    const channel = requestChannel(req.url, headers['x-irc-multiplayer-server']);
    if (channel === null && !principal.scopes.unauthenticated) {
      throw new RelayError('missing_channel', 'Name the multiplayer server: send X-IRC-Multiplayer-Server or ?host=.');
    }
    const lastEventId = parseLastEventId(headers['last-event-id'], this.regions);
    const opener = ownerOf({ account: principal.uuid, clientId: principal.clientId });
    const decision = this.opens.take(opener, [1]);
    if (!decision.allowed) {
      throw new RelayError('too_many_opens', 'This account opens streams too often; wait before opening again.', { retryAfter: decision.retryAfter });
    }
    // Everything needed from the request is read: its headers (session token and client secret
    // among them) need not stay in memory for the hours the stream lives.
    req.headers = {};
    req.rawHeaders = [];
    return {
      identity: {
        id: reqId,
        account: principal.uuid,
        clientId: principal.clientId,
        channel,
        receiveMask: principal.scopes.receiveMask,
        bridge: principal.scopes.unauthenticated,
        agent: principal.agent,
      },
      lastEventId,
      keyExpiresAt: principal.key.expiresAt,
    };
  }

  stop(): void {
    this.opens.stop();
  }

  private refuseWhileDraining(): void {
    if (this.draining()) throw new RelayError('draining', 'This gateway is shutting down; reconnect.', { retryAfter: 1 });
  }
}

function parseLastEventId(value: string | string[] | undefined, regions: readonly string[]): EventPosition | null {
  const regional = regions.length > 0;
  // Node joins a repeated header with ", ", which the id's grammar refuses, and has taken the spaces
  // and tabs around a value off already: nothing else is trimmed (a no-break space is no id's).
  const raw = Array.isArray(value) ? value.join(', ') : value;
  if (raw === undefined || raw === '') return null;
  const position = parseEventId(raw);
  if (position === null) {
    throw new RelayError('invalid_last_event_id', 'Last-Event-ID must be the id of a frame this relay sent (a whole number).');
  }
  if (position.kind === 'regions' && !regional) {
    throw new RelayError('invalid_last_event_id', "Last-Event-ID names positions in regions' logs, and this relay keeps one log: reconnect without it to start from now.");
  }
  if (position.kind === 'single' && regional) {
    throw new RelayError('invalid_last_event_id', 'Last-Event-ID is a position in the log this mesh kept before it had regions, which this relay does not read: reconnect without it to start from now.');
  }
  // Only this mesh's regions: a stream's id names no other (and no id may name more than the grammar's regions).
  if (position.kind === 'regions' && [...position.seqs.keys()].some((r) => !regions.includes(r))) {
    throw new RelayError('invalid_last_event_id', "Last-Event-ID names a region this mesh does not have: it is another mesh's id; reconnect without it to start from now.");
  }
  return position;
}
