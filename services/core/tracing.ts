// OpenTelemetry for one service: a tracer exporting OTLP JSON over HTTP, or nothing at all. Off
// (no OTLP endpoint set), `tracer` is null and every hot path skips tracing on that one check: no
// span object, no header. The provider is never registered globally: each service in a process
// (tests run several) keeps its own, and contexts are passed explicitly rather than through a
// context manager. A message's trace context rides in its NATS headers (W3C `traceparent`), which
// JetStream stores and RePublish hands to every gateway.

import { ROOT_CONTEXT, trace, TraceFlags, type Context, type SpanContext, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler,
} from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_INSTANCE_ID, ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { MsgHdrs } from '@nats-io/nats-core';
import type { TraceSampler, TracingSettings } from './config/tracing-env.js';
import type { Logger } from './logger.js';
import { RELAY_VERSION } from './version.js';

/** The W3C header carrying a message's trace context (NATS headers keep it as sent). */
export const TRACEPARENT = 'traceparent';

/** Spans ended but not yet exported wait at most this long before a batch goes out. */
const EXPORT_DELAY_MS = 1000;

export interface Tracing {
  /** Null when tracing is off. */
  readonly tracer: Tracer | null;
  /** Exports what is still buffered, then stops. */
  shutdown(): Promise<void>;
}

export const TRACING_OFF: Tracing = { tracer: null, shutdown: () => Promise.resolve() };

export function startTracing(settings: TracingSettings, nodeId: string, logger: Logger): Tracing {
  if (!settings.enabled) return TRACING_OFF;
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: settings.serviceName,
      [ATTR_SERVICE_VERSION]: RELAY_VERSION,
      [ATTR_SERVICE_INSTANCE_ID]: nodeId,
    }),
    sampler: samplerOf(settings.sampler, settings.ratio),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.url, headers: settings.headers }), { scheduledDelayMillis: EXPORT_DELAY_MS })],
  });
  // The URL only: export headers may hold a backend's API key.
  logger.info({ url: settings.url, sampler: settings.sampler, ratio: settings.ratio }, 'tracing on: spans are exported as OTLP JSON over HTTP');
  return {
    tracer: provider.getTracer('channel-relay', RELAY_VERSION),
    shutdown: () => provider.shutdown().catch((err: unknown) => logger.warn({ err }, 'tracing: spans could not be flushed at shutdown')),
  };
}

function samplerOf(name: TraceSampler, ratio: number): Sampler {
  const root = name.endsWith('always_on') ? new AlwaysOnSampler() : name.endsWith('always_off') ? new AlwaysOffSampler() : new TraceIdRatioBasedSampler(ratio);
  return name.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root;
}

const propagator = new W3CTraceContextPropagator();

const headerSetter = {
  set(carrier: MsgHdrs, key: string, value: string): void {
    carrier.set(key, value);
  },
};

const headerGetter = {
  get(carrier: MsgHdrs, key: string): string | undefined {
    return carrier.has(key) ? carrier.get(key) : undefined;
  },
  keys(carrier: MsgHdrs): string[] {
    return [...carrier.keys()];
  },
};

/** Writes the context's span into the message headers (`traceparent`, `tracestate`). */
export function injectTrace(context: Context, headers: MsgHdrs): void {
  propagator.inject(context, headers, headerSetter);
}

/**
 * The context a message's headers carry, only when its trace was sampled: a gateway does no span
 * work (and no per-stream counting) for the others.
 */
export function sampledContext(headers: MsgHdrs | undefined): Context | null {
  if (headers === undefined || !headers.has(TRACEPARENT)) return null;
  const context = propagator.extract(ROOT_CONTEXT, headers, headerGetter);
  const span = trace.getSpanContext(context);
  return span !== undefined && isSampled(span) ? context : null;
}

export function isSampled(span: SpanContext): boolean {
  return (span.traceFlags & TraceFlags.SAMPLED) !== 0;
}

/** The trace id of a stored message's `traceparent`, or null when it carries none (untraced). */
export function traceIdOf(headers: MsgHdrs | undefined): { traceId: string; sampled: boolean } | null {
  if (headers === undefined || !headers.has(TRACEPARENT)) return null;
  const span = trace.getSpanContext(propagator.extract(ROOT_CONTEXT, headers, headerGetter));
  return span === undefined ? null : { traceId: span.traceId, sampled: isSampled(span) };
}
