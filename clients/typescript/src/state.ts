// What a RelayClient tells its program: its states, the frames it delivers, the frames it refused,
// and the outcome of a send.

import type { ErrorCode, RelayError } from './errors.js';
import type { InvalidFrame } from './frames.js';
import type { MetaFrame, Payload } from './generated/wire.js';
import type { Superseded } from './presence.js';
import type { SendResult } from './sender.js';

/** One delivered payload with the meta frame that preceded it. */
export interface Frame<P extends Payload = Payload> {
  payload: P;
  meta: MetaFrame;
  /** Its sequence in the relay's log; null for frames that are not in it (the relay's keepalives). */
  id: string | null;
}

export type ClientState =
  /** The first attempt of connect() is under way. */
  | { state: 'connecting' }
  /** The stream is open and subscribed; `resumedFrom` is the Last-Event-ID it was opened with. */
  | { state: 'open'; resumedFrom: string | null }
  /** The stream ended or could not open; the client tries again after `delayMs`. */
  | { state: 'reconnecting'; attempt: number; delayMs: number; reason: ErrorCode; message: string; error: RelayError }
  /**
   * For good: `reason` is the relay's close reason (evicted, banned, key_revoked, key_expired), its
   * refusal code (invalid_session, missing_scope, ...), or client_closed after close().
   */
  | { state: 'closed'; reason: ErrorCode; message: string; error: RelayError | null };

export interface RelayClientEvents {
  payload: Frame;
  state: ClientState;
  /** A frame the relay sent that was not delivered: it does not fit the relay's schemas, or its channel is not the stream's. */
  invalid_frame: InvalidFrame;
}

/** A send whose presence snapshot was replaced by a newer one before it went out. */
export type SendOutcome = SendResult | (Superseded & { accepted: 0; dropped: 0 });
