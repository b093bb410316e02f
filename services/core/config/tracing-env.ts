// OpenTelemetry's standard variables, the subset the relay honours (docs/OPERATIONS.md "Tracing").
// Tracing is off unless an OTLP endpoint is set; spans go out as OTLP JSON over HTTP. Read like
// every other variable (checked at start, passed in), never from process.env at import, so tests
// can run several services with different settings in one process.

import { Type } from '@sinclair/typebox';
import type { ServiceKind } from './schema.js';

// Empty (the default) is unset.
const url = { pattern: '^(https?://\\S+)?$', 'x-expected': 'an http(s) URL' } as const;

export const TRACE_SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;
export type TraceSampler = (typeof TRACE_SAMPLERS)[number];

export const TracingEnv = {
  OTEL_SDK_DISABLED: Type.Union([Type.Literal('false'), Type.Literal('true')], {
    default: 'false',
    description: 'true turns tracing off even with an endpoint set.',
  }),
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.String({
    default: '',
    ...url,
    description: 'OTLP/HTTP base URL (spans go to <it>/v1/traces as JSON). Empty, with no traces endpoint either: tracing is off and costs nothing.',
  }),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: Type.String({
    default: '',
    ...url,
    description: 'Full OTLP/HTTP URL for spans, used as it is (overrides OTEL_EXPORTER_OTLP_ENDPOINT).',
  }),
  OTEL_EXPORTER_OTLP_HEADERS: Type.String({
    default: '',
    pattern: '^([^=,\\s]+=[^,]*(,[^=,\\s]+=[^,]*)*)?$',
    'x-expected': 'comma-separated name=value pairs',
    description: 'Headers sent with every export (name=value, comma-separated; values URL-encoded), such as a backend API key.',
    'x-secret': true,
  }),
  OTEL_EXPORTER_OTLP_PROTOCOL: Type.String({
    default: 'http/json',
    pattern: '^http/json$',
    'x-expected': 'http/json, the only protocol the relay exports with',
    description: 'Only http/json: spans are exported as OTLP JSON over HTTP.',
  }),
  OTEL_SERVICE_NAME: Type.String({
    default: '',
    pattern: '^\\S*$',
    'x-expected': 'a name without spaces',
    description: 'service.name of the spans. Empty: relay-<service> (relay-ingress, relay-gateway, relay-all).',
  }),
  OTEL_TRACES_SAMPLER: Type.Union(
    TRACE_SAMPLERS.map((s) => Type.Literal(s)),
    {
      default: 'parentbased_traceidratio',
      description: 'Which POSTs are traced (the ingress decides; gateways follow the decision carried in the message).',
    },
  ),
  OTEL_TRACES_SAMPLER_ARG: Type.Number({
    default: 1,
    minimum: 0,
    maximum: 1,
    description: 'Ratio of POSTs traced by the traceidratio samplers (0.01: one in a hundred).',
  }),
};

interface TracingValues {
  OTEL_SDK_DISABLED: string;
  OTEL_EXPORTER_OTLP_ENDPOINT: string;
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: string;
  OTEL_EXPORTER_OTLP_HEADERS: string;
  OTEL_SERVICE_NAME: string;
  OTEL_TRACES_SAMPLER: TraceSampler;
  OTEL_TRACES_SAMPLER_ARG: number;
}

export interface TracingSettings {
  /** False: no provider, no span, no header: the hot paths skip tracing with one check. */
  enabled: boolean;
  /** Where spans are POSTed. */
  url: string;
  headers: Record<string, string>;
  serviceName: string;
  sampler: TraceSampler;
  ratio: number;
}

/** Checked already: URLs and header pairs matched their patterns. */
export function tracingSettings(env: TracingValues, service: ServiceKind): TracingSettings {
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '');
  const url = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== '' ? env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT : base === '' ? '' : `${base}/v1/traces`;
  const headers: Record<string, string> = {};
  for (const pair of env.OTEL_EXPORTER_OTLP_HEADERS.split(',')) {
    const at = pair.indexOf('=');
    if (at > 0) headers[pair.slice(0, at).trim()] = safeDecode(pair.slice(at + 1).trim());
  }
  return {
    enabled: url !== '' && env.OTEL_SDK_DISABLED !== 'true',
    url,
    headers,
    serviceName: env.OTEL_SERVICE_NAME !== '' ? env.OTEL_SERVICE_NAME : `relay-${service}`,
    sampler: env.OTEL_TRACES_SAMPLER,
    ratio: env.OTEL_TRACES_SAMPLER_ARG,
  };
}

function safeDecode(v: string): string {
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
}
