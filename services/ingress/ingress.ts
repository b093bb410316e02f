// The ingress service: POST / and /irc. Authenticate, check the whole batch, authorise every entry,
// publish in order to JetStream, answer once every entry is stored.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HTTP_ERROR_CODES, HTTP_ERRORS } from '../../schemas/http-errors.js';
import { PAYLOAD_TYPES } from '../../schemas/payload-types.js';
import { requestChannel } from '../core/channel.js';
import { CLIENT_PATHS, isClientPath } from '../core/http.js';
import { RelayError } from '../core/errors.js';
import { ThrottledWarnings } from '../core/logger.js';
import { ownerOf } from '../core/owner.js';
import { startAtZero } from '../core/metrics.js';
import type { RelayCore } from '../core/runtime.js';
import { planBatch, type PlannedEntry } from './batch.js';
import { AckPublisher } from '../core/ack-publisher.js';
import { fingerprint, idempotencyKey, IdempotencyStore } from './idempotency.js';
import { postTrace, tracePosts, type PostTrace } from './post-tracing.js';
import { PartialPublish, partialPublishError, Publisher } from './publisher.js';
import { RateLimiter } from '../core/rate-limit.js';
import { writtenLog } from '../core/subjects.js';
import { maxPayload } from '../core/nats-connection.js';

/** What a POST can be answered (relay_posts_total's outcome): 200 stored, or the status of a code a POST can get. */
export const POST_STATUSES = ['200', ...new Set(HTTP_ERROR_CODES.filter((c) => HTTP_ERRORS[c].on.some((verb) => verb === 'POST')).map((c) => String(HTTP_ERRORS[c].status)))];

/** The answer to a POST that was stored. */
export interface Accepted {
  /** Entries stored. */
  accepted: number;
  /**
   * Envelopes not published because they name a banned account. (Envelopes from a key that may not
   * re-attribute are dropped silently, as the specification says, and not counted.)
   */
  dropped: number;
}

export class Ingress {
  private readonly core: RelayCore;
  private readonly publisher: Publisher;
  private readonly limiter: RateLimiter;
  private readonly acks: AckPublisher;
  private readonly idempotency: IdempotencyStore<Accepted>;
  private readonly inflight = new Set<FastifyRequest>();
  private idle: (() => void) | null = null;
  private draining = false;

  constructor(core: RelayCore) {
    this.core = core;
    const { nats, metrics, logger, config } = core;
    const warnings = new ThrottledWarnings(logger);
    this.acks = new AckPublisher(nats.nc, nats.inboxPrefix, logger, (again) => {
      metrics.acksRepeated.inc({ stored: again.duplicate ? 'deduplicated' : 'twice' });
      const what = again.duplicate ? 'its duplicate window caught the repeat' : 'the event log holds it twice';
      warnings.warn(`repeated ${String(again.duplicate)}`, { seq: again.seq }, `JetStream acknowledged an entry published once a second time: ${what}`);
    });
    this.publisher = new Publisher(this.acks, metrics, logger, config.ingress.publishTimeoutMs, writtenLog(config.regions?.here ?? null));
    this.limiter = new RateLimiter([
      { perSecond: config.ingress.ratePerSecond, burst: config.ingress.rateBurst },
      { perSecond: config.ingress.bytesPerSecond, burst: config.ingress.bytesBurst },
    ]);
    this.idempotency = new IdempotencyStore(nats.buckets.idempotency, logger, metrics.idempotencyUnrecorded);
    startAtZero(metrics.posts, 'outcome', POST_STATUSES);
    startAtZero(metrics.entriesPublished, 'type', PAYLOAD_TYPES);
  }

  get isDraining(): boolean {
    return this.draining;
  }

  register(app: FastifyInstance): void {
    const { metrics, tracing } = this.core;
    if (tracing.tracer !== null) tracePosts(app, tracing.tracer, CLIENT_PATHS);
    for (const url of CLIENT_PATHS) {
      app.post(url, {
        // A POST is in flight from its first byte: one whose body is still arriving when a drain
        // starts is finished, not refused. Only POSTs that begin after it are turned away.
        onRequest: async (request, reply) => {
          // The router decoded the target (`/%69rc` is routed here); only the spec's spellings count.
          if (!isClientPath(request.raw.url)) {
            throw new RelayError('not_found', `Nothing is served at POST ${request.raw.url?.split('?')[0] ?? ''}; use / or /irc.`);
          }
          // Bodies are read as sent: a compressed one would be stored as garbage or refused as
          // invalid JSON, and a plain one labelled gzip is a client bug worth saying so.
          const encoding = request.headers['content-encoding'];
          if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
            throw new RelayError('unsupported_media_type', 'POST bodies are read as sent: Content-Encoding must be absent or identity.');
          }
          if (this.draining) throw new RelayError('draining', 'This ingress is shutting down; retry.', { retryAfter: 1 });
          this.inflight.add(request);
          metrics.postsInFlight.set(this.inflight.size);
          // The response's close comes whatever the stage: answered, or the connection gone. A client
          // that leaves after sending its whole body (during the session check) gets neither an
          // answer nor an abort from fastify, and its entry stayed for ever (and held up drains).
          reply.raw.once('close', () => this.settled(request));
        },
        onResponse: async (request, reply) => {
          metrics.posts.inc({ outcome: String(reply.statusCode) });
          this.settled(request);
        },
        onRequestAbort: async (request) => this.settled(request),
        handler: (request, reply) => this.handle(request, reply),
      });
    }
  }

  private settled(request: FastifyRequest): void {
    if (!this.inflight.delete(request)) return;
    this.core.metrics.postsInFlight.set(this.inflight.size);
    if (this.inflight.size === 0) this.idle?.();
  }

  private async handle(request: FastifyRequest, reply: FastifyReply): Promise<Accepted> {
    const { auth, bans, config, nats } = this.core;
    // Fail fast while NATS is unreachable: the client retries, rather than waiting out a timeout.
    if (!this.core.natsConnected()) {
      throw new RelayError('unavailable', 'The event log is unreachable right now; retry shortly.', { retryAfter: 1 });
    }
    // No abort signal here (unlike a stream's open): an AbortController per POST cost about 5 % of the
    // ingress's CPU in a profile, and a POST abandoned in the look-up queue is gone at its timeout.
    const principal = await auth.authenticate(request.headers, this.core.addressOf(request.raw), request.log);
    const channel = requestChannel(request.url, request.headers['x-irc-multiplayer-server']);
    const key = idempotencyKey(request.headers['idempotency-key']);
    const { entries, banned } = planBatch(request.body, {
      principal,
      channel,
      batchMax: config.ingress.batchMax,
      entryMaxBytes: config.ingress.entryMaxBytes,
      maxPayload: maxPayload(nats.nc),
      isBanned: (uuid) => bans.activeBan(uuid) !== undefined,
    });

    const sender = ownerOf({ account: principal.uuid, clientId: principal.clientId });
    const bytes = entries.reduce((sum, e) => sum + e.bytes, 0);
    const decision = this.limiter.take(sender, [Math.max(1, entries.length), bytes]);
    if (!decision.allowed) {
      const what = decision.refusedBy === 1 ? 'Too many payload bytes' : 'Too many payloads';
      throw new RelayError('rate_limited', `${what} from this account; slow down.`, { retryAfter: decision.retryAfter });
    }

    if (clientLeft(request)) throw leftUnstored();
    void reply.code(200);
    const dropped = banned.length;
    const traced = postTrace(request, this.core.tracing.tracer);
    if (key === null) return this.publish(entries, dropped, null, traced);
    const print = fingerprint([...entries, ...banned]);
    const reservation = await this.idempotency.reserve(sender, key, print);
    if (reservation.kind === 'replay') return reservation.answer;
    // After the record's round trip a close that came in the same read as the request has been seen
    // (a resend here runs again: the record has no answer).
    if (clientLeft(request)) throw leftUnstored();
    const answer = await this.publish(entries, dropped, `${sender}:${key}`, traced);
    await this.idempotency.complete(sender, key, print, answer);
    return answer;
  }

  private async publish(entries: readonly PlannedEntry[], dropped: number, dedupeId: string | null, traced: PostTrace | null): Promise<Accepted> {
    try {
      await this.publisher.publishAll(entries, dedupeId, traced);
    } catch (e) {
      if (e instanceof PartialPublish) throw partialPublishError(e, dedupeId !== null);
      throw e;
    }
    return { accepted: entries.length, dropped };
  }

  /** Refuse new POSTs and wait for those in flight. */
  async drain(): Promise<void> {
    this.draining = true;
    if (this.inflight.size > 0) await new Promise<void>((resolve) => (this.idle = resolve));
  }

  stop(): void {
    this.limiter.stop();
    this.acks.close();
  }
}

/**
 * Whether the client closed its connection before its POST is stored. One that gave up waiting (an
 * ingress paused or slow) has likely sent it again elsewhere, perhaps to another region, whose
 * Idempotency-Key records are its own: stored here too, it would be heard twice (the region
 * campaign's `ingress pause` stored every such POST so). An HTTP/1.1 client does not half-close a
 * connection it wants an answer on (Node's server takes it as an abort too).
 */
function clientLeft(request: FastifyRequest): boolean {
  const socket = request.raw.socket;
  return socket.destroyed || socket.readableEnded;
}

function leftUnstored(): RelayError {
  // Counted with the session check's own "client closed" refusal (until-aborted.ts); nobody reads it.
  return new RelayError('unavailable', 'The client closed the connection before its payloads were stored; nothing was stored.', { retryAfter: 1 });
}
