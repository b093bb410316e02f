// How a stream ends, for the gateway: the codes of the close catalogue (schemas/close.ts) plus the
// client's own leaving, and the bytes that tell a client why its stream ended.

import { closeEvent, type CloseReasonCode } from '../../../schemas/close.js';
import { encodeComment, encodeEvent, encodeRetry } from './sse.js';

export const CloseReason = {
  ClientClosed: 'client_closed',
  Evicted: 'evicted',
  Banned: 'banned',
  KeyRevoked: 'key_revoked',
  KeyExpired: 'key_expired',
  SlowConsumer: 'slow_consumer',
  Draining: 'draining',
  Error: 'error',
} as const satisfies Record<string, CloseReasonCode | 'client_closed'>;
/** A code of the close catalogue, or the client's own leaving (nothing to tell it). */
export type CloseReason = (typeof CloseReason)[keyof typeof CloseReason];

/**
 * What ends a stream, on the wire: the `close` event a program reads (code, sentence, reconnect
 * advice), the same sentence as a comment for people, and for a retry the SSE `retry:` field that
 * EventSource clients honour.
 */
export function closeFrames(reason: CloseReasonCode, retryAfterMs?: number): Buffer {
  const event = closeEvent(reason, retryAfterMs);
  const parts = [encodeEvent('close', JSON.stringify(event)), encodeComment(event.message)];
  if (event.retryAfterMs !== undefined) parts.unshift(encodeRetry(event.retryAfterMs));
  return Buffer.concat(parts);
}
