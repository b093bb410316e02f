// The ingress's own variables (the POST path: bodies, batches, rate limits, publishing).

import { Type } from '@sinclair/typebox';
import { duration, size } from './env-annotations.js';

export const IngressEnv = {
  BODY_LIMIT: Type.String({ default: '1MiB', ...size, description: 'Largest POST body (413 beyond).' }),
  BATCH_MAX_ENTRIES: Type.Integer({ default: 256, minimum: 1, maximum: 100_000, description: 'Most entries in one POST (413 beyond).' }),
  RATE_LIMIT_PER_SECOND: Type.Number({
    default: 200,
    minimum: 0,
    description: 'Entries per second one account (or bridge key) may post; 429 rate_limited with Retry-After beyond. 0 turns the limit off.',
  }),
  RATE_LIMIT_BURST: Type.Integer({ default: 1000, minimum: 1, description: 'Entries one account may post at once before the rate applies.' }),
  RATE_LIMIT_BYTES_PER_SECOND: Type.String({
    default: '256KiB',
    ...size,
    description: 'Payload bytes per second one account (or bridge key) may post; 429 rate_limited with Retry-After beyond. 0 turns the byte limit off.',
  }),
  RATE_LIMIT_BYTES_BURST: Type.String({
    default: '4MiB',
    ...size,
    description: 'Payload bytes one account may post at once before the byte rate applies.',
  }),
  ENTRY_MAX_BYTES: Type.String({
    default: '64KiB',
    ...size,
    description: "Largest single entry as stored (payload JSON); 413 entry_too_large beyond, or beyond NATS's max_payload if that is smaller.",
  }),
  PUBLISH_TIMEOUT: Type.String({ default: '5s', ...duration, description: 'How long a JetStream acknowledgement may take.' }),
};
