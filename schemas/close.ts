// Why a stream ended, as a program reads it (like centrifuge's disconnect.go): one catalogue of
// every way the relay ends a stream, each with a code, a sentence and whether (and when) the client
// should come back. Before ending a stream the relay sends an SSE event named `close` whose data is
// a CloseEvent, then an SSE comment with the same sentence (for people reading the raw stream).
// Clients that listen only to `meta` and unnamed events never see it.

import { Type, type Static } from '@sinclair/typebox';
import { advisedRetryMs, MIN_RETRY_MS } from './stream-timings.js';

export interface CloseReasonEntry {
  /** What the relay says, for people. */
  message: string;
  /** Whether the client should open the stream again. */
  reconnect: boolean;
  /** When it should, how long to wait first (ms); the relay may send a jittered value instead. */
  retryAfterMs?: number;
}

// The floor of every advised wait lives with the other stream timings; importers of close.ts keep it.
export { MIN_RETRY_MS };

export const CLOSE_REASONS = {
  evicted: {
    message: 'evicted: this account opened another stream on this channel; the newest one wins',
    reconnect: false,
  },
  banned: { message: 'closed: this account is banned from the mesh', reconnect: false },
  key_revoked: { message: 'closed: the API key was revoked; the client build needs a new key', reconnect: false },
  key_expired: { message: 'closed: the API key expired; the client build needs a new key', reconnect: false },
  slow_consumer: {
    message: 'closed: the client did not read fast enough (slow consumer); reconnect with Last-Event-ID',
    reconnect: true,
    retryAfterMs: 1000,
  },
  draining: {
    message: 'closed: the relay is restarting; reconnect with Last-Event-ID',
    reconnect: true,
    retryAfterMs: 2000,
  },
  error: { message: 'closed: internal error; reconnect with Last-Event-ID', reconnect: true, retryAfterMs: 2000 },
} as const satisfies Record<string, CloseReasonEntry>;

export type CloseReasonCode = keyof typeof CLOSE_REASONS;
export const CLOSE_REASON_CODES = Object.keys(CLOSE_REASONS) as CloseReasonCode[];

/** The data of the SSE event `close`. */
export const CloseEvent = Type.Object(
  {
    // A string, not an enum: the catalogue may grow, and a client built today must still read a
    // close event with tomorrow's reason (and treat it by its `reconnect`).
    reason: Type.Unsafe<CloseReasonCode | (string & {})>({
      type: 'string',
      'x-known-values': CLOSE_REASON_CODES,
      description: `Why the stream ends: one code of the catalogue, today ${CLOSE_REASON_CODES.map((c) => `\`${c}\``).join(', ')}. Read an unknown one by \`reconnect\`.`,
    }),
    message: Type.String({ description: 'The same, in a sentence for people.' }),
    reconnect: Type.Boolean({ description: 'Whether the client should open the stream again (with Last-Event-ID).' }),
    retryAfterMs: Type.Optional(
      Type.Integer({ minimum: MIN_RETRY_MS, description: 'Present when reconnect is true: how long to wait before reconnecting (never less than 1000).' }),
    ),
  },
  { additionalProperties: false, description: 'Sent as `event: close` just before the relay ends a stream.' },
);
export type CloseEvent = Static<typeof CloseEvent>;

/** The close event for a reason; `retryAfterMs` overrides the catalogue's wait (a jittered drain). */
export function closeEvent(reason: CloseReasonCode, retryAfterMs?: number): CloseEvent {
  const entry: CloseReasonEntry = CLOSE_REASONS[reason];
  const event: CloseEvent = { reason, message: entry.message, reconnect: entry.reconnect };
  if (entry.reconnect) event.retryAfterMs = advisedRetryMs(retryAfterMs ?? entry.retryAfterMs ?? MIN_RETRY_MS);
  return event;
}
