// Publishing a checked batch to JetStream. Entries are sent back to back on one connection (so the
// stream stores them in order) and the POST is answered once every acknowledgement is in: a 2xx
// means persisted. On failure part-way the client learns how many leading entries were stored.

import { headers as natsHeaders } from '@nats-io/nats-core';
import { ErrorCode, RelayError } from '../core/errors.js';
import { ThrottledWarnings, type Logger } from '../core/logger.js';
import type { RelayMetrics } from '../core/metrics.js';
import { channelSubject } from '../core/subjects.js';
import { Header } from '../core/wire-headers.js';
import { type AckPublisher, type StoredAck } from './ack-publisher.js';
import type { PlannedEntry } from './batch.js';

export class Publisher {
  private readonly acks: AckPublisher;
  private readonly metrics: RelayMetrics;
  private readonly warnings: ThrottledWarnings;
  private readonly timeoutMs: number;

  constructor(acks: AckPublisher, metrics: RelayMetrics, logger: Logger, timeoutMs: number) {
    this.acks = acks;
    this.metrics = metrics;
    this.warnings = new ThrottledWarnings(logger);
    this.timeoutMs = timeoutMs;
  }

  /**
   * Stores every entry, in order. `dedupeKey` (from Idempotency-Key, scoped to the sender) makes a
   * resent batch store each entry once within the stream's duplicate window.
   */
  async publishAll(entries: readonly PlannedEntry[], dedupeKey: string | null): Promise<StoredAck[]> {
    const started = performance.now();
    const now = String(Date.now());
    const pending = entries.map((e, i) => {
      const h = natsHeaders();
      h.set(Header.Sender, e.sender);
      if (e.agent !== null) h.set(Header.Agent, e.agent);
      h.set(Header.Type, e.type);
      h.set(Header.Channel, e.channel);
      if (e.to !== null) h.set(Header.To, e.to);
      h.set(Header.Time, now);
      // JetStream's de-duplication header: a resent batch with the same key is stored once.
      if (dedupeKey !== null) h.set('Nats-Msg-Id', `${dedupeKey}:${i}`);
      return this.acks.publish(channelSubject(e.channel), e.json, h, this.timeoutMs);
    });
    const settled = await Promise.allSettled(pending);
    const firstFailure = settled.findIndex((s) => s.status === 'rejected');
    if (firstFailure === -1) {
      this.metrics.publishDuration.observe((performance.now() - started) / 1000);
      for (const e of entries) this.metrics.entriesPublished.inc({ type: e.type });
      return settled.map((s) => (s as PromiseFulfilledResult<StoredAck>).value);
    }
    const failure = settled[firstFailure] as PromiseRejectedResult;
    for (const e of entries.slice(0, firstFailure)) this.metrics.entriesPublished.inc({ type: e.type });
    const reason = failure.reason instanceof Error ? failure.reason.message : String(failure.reason);
    this.warnings.warn(reason, { reason, accepted: firstFailure, entries: entries.length }, 'JetStream did not acknowledge a batch');
    throw new RelayError(
      503,
      ErrorCode.PublishFailed,
      `The event log did not acknowledge entry ${firstFailure}; the first ${firstFailure} entries were stored, resend the rest.`,
      { retryAfter: 1, extra: { accepted: firstFailure } },
    );
  }
}
