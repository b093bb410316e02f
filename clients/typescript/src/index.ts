// @channel-relay/client: the relay's client library. Wire types are generated from the relay's own
// schemas (src/generated/wire.ts).
export { RelayClient } from './client.js';
export type { ClientState, Frame, RelayClientEvents, SendOutcome } from './state.js';
export type { EnvelopeInput } from './envelopes.js';
export type { InvalidFrame, InvalidFrameReason } from './frames.js';
export { RelayError, isRelayError, type ClientErrorCode, type ErrorCode, type ErrorDetail } from './errors.js';
export type { RelayClientOptions, FetchLike, FetchInit } from './options.js';
export type { BackoffOptions } from './backoff.js';
export type { SendResult } from './sender.js';
export type { TokenSource } from './session.js';
export * from './generated/wire.js';
