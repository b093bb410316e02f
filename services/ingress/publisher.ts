// Publishing a checked batch to JetStream. Entries are published one after another, each once the
// previous one is acknowledged, and the POST is answered once every acknowledgement is in: a 2xx
// means persisted. Waiting for each acknowledgement is what makes a failure's answer exact: nothing
// after the first failure has been sent, so `accepted` (the leading entries JetStream acknowledged)
// is the whole truth, and an entry whose acknowledgement never came is reported as unknown. A batch
// of one entry (the usual POST) costs the same as before; different POSTs still share socket writes.

import { SpanStatusCode } from '@opentelemetry/api';
import { RelayError } from '../core/errors.js';
import { ThrottledWarnings, type Logger } from '../core/logger.js';
import type { RelayMetrics } from '../core/metrics.js';
import type { WrittenLog } from '../core/subjects.js';
import { Header } from '../core/wire-headers.js';
import type { AckPublisher } from '../core/ack-publisher.js';
import { PublishError } from '../core/jetstream-ack.js';
import type { PlannedEntry } from './batch.js';
import { SpanAttr } from '../core/span-attributes.js';
import { describePost, startPublishSpan, type PostTrace } from './post-tracing.js';

/** Why publishing stopped part-way. */
export class PartialPublish extends Error {
  /** Leading entries JetStream acknowledged. */
  readonly accepted: number;
  /** 1 when the entry after them may or may not have been stored (no acknowledgement in time). */
  readonly unknown: number;
  /** Where that entry is in the POST body (the client's numbering: dropped envelopes count). */
  readonly entry: number;
  constructor(message: string, accepted: number, unknown: number, entry: number) {
    super(message);
    this.name = 'PartialPublish';
    this.accepted = accepted;
    this.unknown = unknown;
    this.entry = entry;
  }
}

export class Publisher {
  private readonly acks: AckPublisher;
  private readonly metrics: RelayMetrics;
  private readonly warnings: ThrottledWarnings;
  private readonly timeoutMs: number;
  private readonly log: WrittenLog;

  /** `log`: the one log, or this ingress's region's (its acknowledgement never waits for another region). */
  constructor(acks: AckPublisher, metrics: RelayMetrics, logger: Logger, timeoutMs: number, log: WrittenLog) {
    this.acks = acks;
    this.log = log;
    this.metrics = metrics;
    this.warnings = new ThrottledWarnings(logger);
    this.timeoutMs = timeoutMs;
  }

  /**
   * Stores every entry, in order, or throws PartialPublish saying exactly how far it got. `dedupeId`
   * (from Idempotency-Key, scoped to the sender) gives entry i the JetStream message id
   * `<dedupeId>:<position in the body>`, so the same request resent stores each entry once within the
   * duplicate window. `traced`: the POST's sampled trace, each entry then gets a publish span whose
   * context its headers carry to the gateways.
   */
  async publishAll(entries: readonly PlannedEntry[], dedupeId: string | null, traced: PostTrace | null = null): Promise<void> {
    const started = performance.now();
    const now = String(Date.now());
    if (traced !== null) describePost(traced, entries.length, entries[0]?.channel ?? null);
    for (const [i, e] of entries.entries()) {
      const h = e.headers;
      h.set(Header.Time, now);
      // JetStream's de-duplication header: a resent request with the same key is stored once.
      if (dedupeId !== null) h.set('Nats-Msg-Id', `${dedupeId}:${e.index}`);
      const subject = this.log.subject(e.channel);
      const span = traced === null ? null : startPublishSpan(traced, subject, e.channel, e.type, h);
      try {
        const ack = await this.acks.publish(subject, e.json, h, this.timeoutMs);
        span?.setAttribute(SpanAttr.Sequence, ack.seq).end();
      } catch (err) {
        const unknown = err instanceof PublishError && err.outcome === 'unknown' ? 1 : 0;
        const reason = err instanceof Error ? err.message : String(err);
        span?.setStatus({ code: SpanStatusCode.ERROR, message: reason }).end();
        this.warnings.warn(reason, { reason, accepted: i, unknown, entries: entries.length }, 'JetStream did not acknowledge an entry');
        throw new PartialPublish(reason, i, unknown, e.index);
      }
      this.metrics.entriesPublished.inc({ type: e.type });
    }
    this.metrics.publishDuration.observe((performance.now() - started) / 1000);
  }
}

/**
 * The 503 a client gets for a batch that stopped part-way, with advice that never loses an entry.
 * Positions are the client's own (its body's), whatever envelopes were dropped.
 */
export function partialPublishError(p: PartialPublish, withIdempotencyKey: boolean): RelayError {
  const at = p.entry;
  const stored = p.accepted === 0 ? 'no entry was stored' : `every entry before entry ${at} was stored (${p.accepted})`;
  const failed = p.unknown === 1 ? `entry ${at} may or may not have been stored (no acknowledgement in time)` : `entry ${at} was not stored`;
  const advice = withIdempotencyKey
    ? 'Resend the same request with the same Idempotency-Key within STREAM_DUPLICATE_WINDOW (2 minutes by default): entries already stored are not stored twice.'
    : p.unknown === 1
      ? `Resending from entry ${at} may store it twice; send an Idempotency-Key to make resends safe.`
      : `Resend the entries from entry ${at} on.`;
  return new RelayError('publish_failed', `The event log did not acknowledge the batch: ${stored}, ${failed}, and nothing after it was sent. ${advice}`, {
    retryAfter: 1,
    extra: { accepted: p.accepted, unknown: p.unknown, entry: at },
  });
}
