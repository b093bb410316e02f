// The root of a message's trace: the POST's server span, and one `publish` span per stored entry
// whose context goes into the entry's NATS headers. Registered only when tracing is on. The
// client's own `traceparent` is ignored: clients are untrusted (DESIGN.md section 6), and one that
// marked every POST sampled would have the relay trace, and pay for, all of its traffic.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_HTTP_ROUTE } from '@opentelemetry/semantic-conventions';
import type { MsgHdrs } from '@nats-io/nats-core';
import { natsMessaging, SpanAttr } from '../core/span-attributes.js';
import { injectTrace, isSampled } from '../core/tracing.js';

/** What a POST hands its publisher when its trace is sampled. */
export interface PostTrace {
  tracer: Tracer;
  /** The POST span's context: every publish span is its child. */
  parent: Context;
}

const SPANS = new WeakMap<FastifyRequest, Span>();

export function tracePosts(app: FastifyInstance, tracer: Tracer, paths: readonly string[]): void {
  const traced = (request: FastifyRequest): boolean => request.method === 'POST' && paths.includes(request.routeOptions.url ?? '');
  // Callback hooks, not async ones: every POST passes through them, sampled or not, and an async
  // hook costs the ingress promise turns on each (measured: -18 % POSTs/s at 1 % sampling).
  app.addHook('onRequest', (request, _reply, done) => {
    if (traced(request)) {
      const route = request.routeOptions.url ?? '/';
      const span = tracer.startSpan(`POST ${route}`, { kind: SpanKind.SERVER, attributes: { [ATTR_HTTP_REQUEST_METHOD]: 'POST', [ATTR_HTTP_ROUTE]: route } }, ROOT_CONTEXT);
      // An unsampled span records nothing: only sampled ones are kept for the answer.
      if (span.isRecording()) SPANS.set(request, span);
    }
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    const span = SPANS.get(request);
    if (span !== undefined) {
      SPANS.delete(request);
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, reply.statusCode);
      if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    const span = SPANS.get(request);
    if (span !== undefined) {
      SPANS.delete(request);
      span.setStatus({ code: SpanStatusCode.ERROR, message: 'the client left before the answer' });
      span.end();
    }
    done();
  });
}

/** The POST's trace, or null when it is not traced (tracing off, or not sampled). */
export function postTrace(request: FastifyRequest, tracer: Tracer | null): PostTrace | null {
  const span = tracer === null ? undefined : SPANS.get(request);
  if (span === undefined || tracer === null || !isSampled(span.spanContext())) return null;
  return { tracer, parent: trace.setSpan(ROOT_CONTEXT, span) };
}

/** Starts one entry's publish span and writes its context into the entry's headers. */
export function startPublishSpan(t: PostTrace, subject: string, channel: string, type: string, headers: MsgHdrs): Span {
  const attributes = { ...natsMessaging('send'), [SpanAttr.MessagingDestinationName]: subject, [SpanAttr.Channel]: channel, [SpanAttr.Type]: type };
  const span = t.tracer.startSpan('publish', { kind: SpanKind.PRODUCER, attributes }, t.parent);
  injectTrace(trace.setSpan(t.parent, span), headers);
  return span;
}

/** What the POST span says of its batch (entries, channel; never the sender or a credential). */
export function describePost(t: PostTrace, entries: number, channel: string | null): void {
  const span = trace.getSpan(t.parent);
  span?.setAttribute(SpanAttr.Entries, entries);
  if (channel !== null) span?.setAttribute(SpanAttr.Channel, channel);
}
