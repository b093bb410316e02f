// What the library accepts of a delivered frame before handing it to the program: a meta frame and a
// payload that fit the relay's own schemas (generated/schemas.ts), on the channel the stream asked
// for, and close events read against the relay's close catalogue. A frame that fails is never
// delivered; the client reports it as an `invalid_frame` event (see client.ts).

import { boundsProblem, check } from './check.js';
import { RelayError } from './errors.js';
import { ENTRY_MAX_DEPTH, META_SCHEMA, PAYLOAD_SCHEMAS } from './generated/schemas.js';
import { CLOSE_REASONS, type CloseReasonCode, type MetaFrame, type Payload } from './generated/wire.js';

/** Why a frame was not delivered (the stable code of an InvalidFrame). */
export type InvalidFrameReason =
  /** A data event without the meta event that must precede it, or with no `type`. */
  | 'unpaired_data'
  /** Data that is not a JSON object. */
  | 'invalid_json'
  /** A meta frame that does not fit MetaFrame (uuid, agent string or null, channel). */
  | 'invalid_meta'
  /** A frame of a channel this stream did not ask for (a stream hears only its own channel). */
  | 'other_channel'
  /** A payload type the library does not know (a newer relay, or not the relay). */
  | 'unknown_type'
  /** A payload of a known type that does not fit its schema. */
  | 'invalid_payload'
  /** A `close` event without a reason or reconnect advice. */
  | 'invalid_close';

/** A frame the library did not deliver. */
export interface InvalidFrame {
  reason: InvalidFrameReason;
  /** The frame's id (its sequence in the relay's log), null when it had none or one the relay never sends. */
  id: string | null;
  /** What was wrong, with at most a short excerpt of the frame. */
  message: string;
}

/** The most of a frame's text quoted in a report: enough to recognise it, never a whole payload. */
export const EXCERPT_CHARS = 80;

export function excerpt(text: string): string {
  const flat = text.replace(/[\x00-\x1f\x7f]/g, ' ');
  return flat.length > EXCERPT_CHARS ? `${flat.slice(0, EXCERPT_CHARS)}…` : flat;
}

export type Checked = { ok: true; meta: MetaFrame; payload: Payload } | { ok: false; reason: InvalidFrameReason; message: string };

/**
 * Checks a parsed pair. `channel` is the stream's normalised channel; undefined for a bridge stream
 * opened without one, which hears every channel.
 */
export function checkPair(meta: unknown, payload: unknown, channel: string | undefined): Checked {
  const m = check(META_SCHEMA, meta);
  if (m !== null) return { ok: false, reason: 'invalid_meta', message: `the meta frame is not the relay's (${m})` };
  const mf = meta as MetaFrame;
  if (channel !== undefined && mf.channel !== channel) {
    return { ok: false, reason: 'other_channel', message: `a frame of channel "${excerpt(mf.channel)}" on a stream of "${channel}"` };
  }
  const type = (payload as { type?: unknown }).type;
  const schema = typeof type === 'string' && Object.hasOwn(PAYLOAD_SCHEMAS, type) ? PAYLOAD_SCHEMAS[type] : undefined;
  if (schema === undefined) return { ok: false, reason: 'unknown_type', message: `unknown payload type "${excerpt(String(type))}"` };
  const p = check(schema, payload) ?? boundsProblem(payload, ENTRY_MAX_DEPTH);
  if (p !== null) return { ok: false, reason: 'invalid_payload', message: `a ${String(type)} payload that does not fit its schema (${p})` };
  return { ok: true, meta: mf, payload: payload as Payload };
}

/** A close event as the client acts on it. */
export interface Closing {
  error: RelayError;
  reconnect: boolean;
}

/** The longest reason or message kept of a close event the catalogue does not know. */
const MAX_CLOSE_TEXT = 200;

/**
 * Reads a close event. A known reason is the catalogue's word: whether to reconnect is decided by
 * the catalogue, whatever the event's flag says (an `evicted` with reconnect: true made two copies
 * of one account take the stream from each other for ever). An unknown reason (a newer relay) is kept
 * as text in the error's body, under the code `unknown_close`, and its flag is followed.
 */
export function readClose(data: unknown): Closing | { problem: string } {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return { problem: 'a close event that is not a JSON object' };
  const { reason, reconnect, message, retryAfterMs } = data as Record<string, unknown>;
  const advice = typeof retryAfterMs === 'number' && Number.isFinite(retryAfterMs) ? { retryAfterMs } : {};
  if (typeof reason === 'string' && Object.hasOwn(CLOSE_REASONS, reason)) {
    const entry = CLOSE_REASONS[reason as CloseReasonCode];
    const text = typeof message === 'string' ? message.slice(0, MAX_CLOSE_TEXT) : entry.message;
    return { error: new RelayError(reason, text, advice), reconnect: entry.reconnect };
  }
  if (typeof reason !== 'string' || typeof reconnect !== 'boolean') return { problem: 'a close event without a reason and reconnect advice' };
  const said = excerpt(reason.slice(0, MAX_CLOSE_TEXT));
  const text = typeof message === 'string' ? excerpt(message.slice(0, MAX_CLOSE_TEXT)) : '';
  return {
    error: new RelayError('unknown_close', `the relay closed the stream for a reason this library does not know ("${said}")${text === '' ? '' : `: ${text}`}`, { ...advice, body: { reason: said } }),
    reconnect,
  };
}
