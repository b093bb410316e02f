// A Last-Event-ID resume's span: where the answer came from (the resume window in memory, or the
// log), how many frames it sent, and links to the traces of the stored entries it re-delivered
// (those read from the log carry their `traceparent`; the window keeps no headers), so a backend
// leads from a message's trace to the resumes that sent it again. Links are bounded: a long replay
// links its first MAX_LINKS sampled entries and counts the rest.

import { SpanKind, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import type { MsgHdrs } from '@nats-io/nats-core';
import { SpanAttr } from '../../core/span-attributes.js';
import { sampledContext } from '../../core/tracing.js';

const MAX_LINKS = 32;

export class ReplayTrace {
  private readonly span: Span;
  private frames = 0;
  private links = 0;
  private firstSeq = 0;
  private lastSeq = 0;

  private constructor(span: Span) {
    this.span = span;
  }

  /** Null when tracing is off or this resume is not sampled: the replay then does no span work. */
  static start(tracer: Tracer | null, channel: string | null, lastId: number): ReplayTrace | null {
    if (tracer === null) return null;
    const span = tracer.startSpan('replay', {
      kind: SpanKind.SERVER,
      attributes: { [SpanAttr.Channel]: channel ?? '*', [SpanAttr.ResumeLastEventId]: lastId },
    });
    return span.isRecording() ? new ReplayTrace(span) : null;
  }

  /** A frame re-sent to the client; `headers` when it was read from the log. */
  sent(seq: number, headers: MsgHdrs | undefined): void {
    this.frames++;
    if (this.firstSeq === 0) this.firstSeq = seq;
    this.lastSeq = seq;
    if (headers === undefined || this.links >= MAX_LINKS) return;
    const context = sampledContext(headers);
    const linked = context === null ? undefined : trace.getSpanContext(context);
    if (linked === undefined) return;
    this.span.addLink({ context: linked, attributes: { [SpanAttr.Sequence]: seq } });
    this.links++;
  }

  end(answered: 'memory' | 'log' | 'client_left'): void {
    this.span.setAttributes({
      [SpanAttr.ResumeAnswered]: answered,
      [SpanAttr.ReplayFrames]: this.frames,
      [SpanAttr.ReplayFirstSequence]: this.firstSeq,
      [SpanAttr.ReplayLastSequence]: this.lastSeq,
      [SpanAttr.ReplayLinks]: this.links,
    });
    this.span.end();
  }

  failed(err: unknown): void {
    this.span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
    this.span.end();
  }
}
