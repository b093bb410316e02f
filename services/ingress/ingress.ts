// The ingress service: POST / and /irc. Authenticate, check the whole batch, authorise every entry,
// publish in order to JetStream, answer once every entry is stored.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { channelFromRequest } from '../core/channel.js';
import { ErrorCode, RelayError } from '../core/errors.js';
import type { RelayCore } from '../core/runtime.js';
import { planBatch } from './batch.js';
import { AckPublisher } from './ack-publisher.js';
import { Publisher } from './publisher.js';
import { RateLimiter } from './rate-limit.js';

const POST_PATHS = ['/', '/irc'];
const IDEMPOTENCY_KEY = /^[A-Za-z0-9_.:-]{1,128}$/;

export class Ingress {
  private readonly core: RelayCore;
  private readonly publisher: Publisher;
  private readonly limiter: RateLimiter;
  private readonly acks: AckPublisher;
  private readonly inflight = new Set<FastifyRequest>();
  private idle: (() => void) | null = null;
  private draining = false;

  constructor(core: RelayCore) {
    this.core = core;
    const { nats, metrics, logger, config } = core;
    this.acks = new AckPublisher(nats.nc);
    this.publisher = new Publisher(this.acks, metrics, logger, config.ingress.publishTimeoutMs);
    this.limiter = new RateLimiter(config.ingress.ratePerSecond, config.ingress.rateBurst);
  }

  get isDraining(): boolean {
    return this.draining;
  }

  register(app: FastifyInstance): void {
    const { metrics } = this.core;
    for (const url of POST_PATHS) {
      app.post(url, {
        // A POST is in flight from its first byte: one whose body is still arriving when a drain
        // starts is finished, not refused. Only POSTs that begin after it are turned away.
        onRequest: async (request) => {
          if (this.draining) throw new RelayError(503, ErrorCode.Draining, 'This ingress is shutting down; retry.', { retryAfter: 1 });
          this.inflight.add(request);
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
    if (this.inflight.delete(request) && this.inflight.size === 0) this.idle?.();
  }

  private async handle(request: FastifyRequest, reply: FastifyReply): Promise<{ accepted: number }> {
    const { auth, config } = this.core;
    // Fail fast while NATS is unreachable: the client retries, rather than waiting out a timeout.
    if (!this.core.natsConnected()) {
      throw new RelayError(503, ErrorCode.Unavailable, 'The event log is unreachable right now; retry shortly.', { retryAfter: 1 });
    }
    const principal = await auth.authenticate(request.headers, request.log);
    const query = request.query as { host?: string };
    const header = request.headers['x-irc-multiplayer-server'];
    const channel = channelFromRequest(query.host, Array.isArray(header) ? header[0] : header);
    const entries = planBatch(request.body, { principal, channel, batchMax: config.ingress.batchMax });

    const sender = principal.uuid ?? `key:${principal.clientId}`;
    const decision = this.limiter.take(sender, Math.max(1, entries.length));
    if (!decision.allowed) {
      throw new RelayError(429, ErrorCode.RateLimited, 'Too many payloads from this account; slow down.', {
        retryAfter: decision.retryAfter,
      });
    }
    const idempotency = request.headers['idempotency-key'];
    const key = typeof idempotency === 'string' ? idempotency.trim() : '';
    if (key !== '' && !IDEMPOTENCY_KEY.test(key)) {
      throw new RelayError(400, ErrorCode.BadRequest, 'Idempotency-Key must be 1 to 128 letters, digits or "_.:-".');
    }
    await this.publisher.publishAll(entries, key === '' ? null : `${sender}:${key}`);
    void reply.code(200);
    return { accepted: entries.length };
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
