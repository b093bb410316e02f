// Every refusal a client can get from GET or POST / (and /irc), as client authors read it: code,
// HTTP status, when it happens, what the client does about it, and what the body carries besides
// {error, message}. This is the one catalogue of the relay's error codes: services/core/errors.ts
// takes each code's status from here, and the generated OpenAPI document and docs describe the same
// entries, so neither can drift. It is written in three parts: the final refusals of a request
// (below), the throttles of a client over its share (http-throttles.ts, 429) and the trouble of the
// relay or what it depends on (http-trouble.ts, 5xx). schemas/ imports nothing from services/: the
// client library builds on schemas/ alone.

import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { FIX, STOP_KEY, type HttpErrorEntry } from './http-error-entry.js';
import { HTTP_THROTTLES } from './http-throttles.js';
import { HTTP_TROUBLE } from './http-trouble.js';
import { UNSAFE_TEXT_WORDS } from './text.js';

export type { HttpErrorEntry, StreamOrPost } from './http-error-entry.js';

/** A refusal that asking again does not change: a 4xx other than 429. */
type FinalEntry = HttpErrorEntry & { status: 400 | 401 | 403 | 404 | 405 | 406 | 408 | 413 | 415 | 422 | 431 };

const FINAL_REFUSALS = {
  bad_request: {
    status: 400,
    on: ['POST'],
    when: 'A malformed request: an Idempotency-Key that is not 1 to 128 letters, digits or "_.:-", or a request the HTTP layer cannot read.',
    action: FIX,
  },
  invalid_json: { status: 400, on: ['POST'], when: 'The body is empty or not valid JSON; nothing was published.', action: FIX },
  invalid_payload: {
    status: 400,
    on: ['POST'],
    when: `An entry fails its schema (a field missing or out of range, a non-finite number, nesting past 32 levels, an envelope \`agent\` or \`userAgent\` holding ${UNSAFE_TEXT_WORDS}); nothing was published.`,
    action: `${FIX} \`details\` names each entry and JSON path.`,
    details: true,
  },
  unknown_type: {
    status: 400,
    on: ['POST'],
    when: 'An entry has a `type` that is not one of the eleven payload types (spec 2.1 rule 1); nothing was published.',
    action: `${FIX} Never drop the entry silently on the client side either.`,
    details: true,
  },
  invalid_channel: {
    status: 400,
    on: ['GET', 'POST'],
    when: 'The channel (query `host`, header X-IRC-Multiplayer-Server, or an envelope `host`) is not a host name: allowed are letters, digits, ".", "-", "_", ":" and a bracketed IPv6 literal, 1 to 253 characters; on POST also an entry with no channel at all.',
    action: FIX,
    details: true,
  },
  invalid_user_agent: {
    status: 400,
    on: ['GET', 'POST'],
    when: `The User-Agent header holds ${UNSAFE_TEXT_WORDS} (the one text rule), read as UTF-8 when it is valid UTF-8 and byte by byte otherwise. Answered once the session and key are checked (a cracked client is banned all the same), before anything is stored or a stream opens; the message names the first such character.`,
    action: `${FIX} Send \`<mod_id>/<mod_version>+<git commit>\`: other players see it as your agent.`,
  },
  missing_channel: {
    status: 400,
    on: ['GET'],
    when: 'A stream opened without a channel (neither query `host` nor X-IRC-Multiplayer-Server) by a key that is not a bridge key.',
    action: FIX,
  },
  sender_required: {
    status: 400,
    on: ['POST'],
    when: 'A bridge (no Authorization) posted a bare payload: without a session every entry must be an envelope naming its `user`.',
    action: FIX,
    details: true,
  },
  invalid_last_event_id: {
    status: 400,
    on: ['GET'],
    when: "Last-Event-ID is not the id of a frame this relay sent (a whole number of at most 15 digits; a mesh with regions sends each region's position, `eu:1042.us:77`, and one without them refuses that form).",
    action: 'Send back exactly the last `id:` the stream gave; if that is refused, open the stream again without Last-Event-ID (the client library does).',
  },
  conflicting_credentials: {
    status: 400,
    on: ['GET', 'POST'],
    when: 'Two different client ids or secrets in one request (repeated header lines, or several spellings with different values); never a ban.',
    action: `${FIX} Send one client id and one client secret, under one spelling.`,
  },
  unauthorized: {
    status: 401,
    on: ['GET', 'POST'],
    when: 'No Authorization header, and the client credentials are not those of a bridge key (irc.connection.unauthenticated); no ban, there is no account.',
    action: 'Send Authorization: Bearer <game access token>. Game clients always send it.',
  },
  invalid_session: {
    status: 401,
    on: ['GET', 'POST'],
    when: 'The game profile API does not know the session token (expired, logged out, malformed bearer).',
    action: 'Refresh the game token once and retry once; a second 401 is final.',
  },
  banned: {
    status: 403,
    on: ['GET', 'POST'],
    when: 'The account is banned from the mesh; a valid session with missing or wrong client credentials is banned on the spot (spec A3).',
    action: 'Final: stop (no retry, no reconnect). Never send a session without client credentials.',
  },
  key_expired: { status: 403, on: ['GET', 'POST'], when: "The client build's API key has expired (spec A2).", action: STOP_KEY },
  key_revoked: { status: 403, on: ['GET', 'POST'], when: "The client build's API key was revoked, or deleted (spec A2).", action: STOP_KEY },
  missing_scope: {
    status: 403,
    on: ['GET', 'POST'],
    when: 'The key lacks a scope: irc.connection.establish to open a stream, the send scope of an entry type on POST (nothing was published); never a ban (spec A4).',
    action: 'Final for this request: `scope` names the scope missing. Do not send that type again with this key.',
    extra: ['scope'],
  },
  not_found: {
    status: 404,
    on: [],
    when: 'A path other than / and /irc (and the operational /healthz, /readyz, /metrics).',
    action: 'Use / or /irc.',
  },
  method_not_allowed: {
    status: 405,
    on: ['GET', 'POST'],
    when: 'A proxy sent the verb to a process serving only the other one (GET to an ingress, POST to a gateway).',
    action: 'An operator problem: back off as for 503 and report it.',
  },
  not_acceptable: {
    status: 406,
    on: ['GET'],
    when: 'GET with an Accept header that does not allow text/event-stream.',
    action: `${FIX} Send Accept: text/event-stream.`,
  },
  request_timeout: {
    status: 408,
    on: ['POST'],
    when: 'The body did not arrive within BODY_TIMEOUT (10 s by default); nothing was published and the connection is closed.',
    action: 'Resend the same body with the same Idempotency-Key.',
  },
  headers_too_large: {
    status: 431,
    on: ['GET', 'POST'],
    when: "The request's headers are larger than 16 KiB (Node's bound); nothing was done and the connection is closed.",
    action: FIX,
  },
  payload_too_large: { status: 413, on: ['POST'], when: 'The body is larger than BODY_LIMIT (1 MiB by default); nothing was published.', action: `${FIX} Split the batch.` },
  batch_too_large: { status: 413, on: ['POST'], when: 'The batch has more than BATCH_MAX_ENTRIES entries (256 by default); nothing was published.', action: `${FIX} Split the batch.` },
  entry_too_large: {
    status: 413,
    on: ['POST'],
    when: 'One entry is larger than ENTRY_MAX_BYTES (64 KiB by default) or than NATS can carry; nothing was published.',
    action: `${FIX} \`details\` names the entry.`,
    details: true,
  },
  unsupported_media_type: {
    status: 415,
    on: ['POST'],
    when: 'The body is not sent as Content-Type: application/json, or is sent with a Content-Encoding other than identity (the relay takes bodies as they are).',
    action: `${FIX} Send Content-Type: application/json, uncompressed.`,
  },
  idempotency_key_reused: {
    status: 422,
    on: ['POST'],
    when: 'An Idempotency-Key already used (within STREAM_DUPLICATE_WINDOW, 2 min by default) for another body.',
    action: 'A client bug: a new request needs a new key. Never send "the rest" of a batch under the key of the whole.',
  },
} as const satisfies Record<string, FinalEntry>;

/** The catalogue, in order of status. */
export const HTTP_ERRORS = { ...FINAL_REFUSALS, ...HTTP_THROTTLES, ...HTTP_TROUBLE };

export type HttpErrorCode = keyof typeof HTTP_ERRORS;
export const HTTP_ERROR_CODES = Object.keys(HTTP_ERRORS) as HttpErrorCode[];

/** Members some refusals add to the body, by name. */
export const ERROR_EXTRA_MEMBERS = {
  accepted: Type.Integer({ minimum: 0, description: 'publish_failed only: how many leading entries of the batch are stored.' }),
  unknown: Type.Integer({
    minimum: 0,
    maximum: 1,
    description: 'publish_failed only: 1 when the entry after the stored ones may or may not be stored (its acknowledgement did not come), else 0.',
  }),
  entry: Type.Integer({
    minimum: 0,
    description: 'publish_failed only: the position in the POST body of the entry that failed (dropped envelopes count).',
  }),
  scope: Type.String({ description: 'missing_scope only: the scope the key lacks, e.g. irc.messages.send.chat.' }),
  limit: Type.Integer({ minimum: 0, description: 'too_many_streams only: the most streams allowed.' }),
} as const satisfies Record<string, TSchema>;
export type ErrorExtraMember = keyof typeof ERROR_EXTRA_MEMBERS;

export const ErrorDetail = Type.Object(
  {
    entry: Type.Optional(Type.Integer({ minimum: 0, description: 'Index of the batch entry (0 for a single payload).' })),
    path: Type.Optional(Type.String({ description: 'JSON Pointer into that entry ("" for the entry itself).' })),
    reason: Type.String({ description: 'What is wrong, in a sentence.' }),
  },
  { description: 'One problem of a refused request.' },
);
export type ErrorDetail = Static<typeof ErrorDetail>;

/** Which codes require which extra members: `then` clauses of the error body. */
function extraRules(): object[] {
  return HTTP_ERROR_CODES.flatMap((code) => {
    const entry: HttpErrorEntry = HTTP_ERRORS[code];
    if (entry.extra === undefined) return [];
    return [{ if: { properties: { error: { const: code } }, required: ['error'] }, then: { required: [...entry.extra] } }];
  });
}

/** The body of every refusal. Readers should tolerate members they do not know. */
export const ErrorBody = Type.Object(
  {
    // A string, not an enum: codes may be added, and a client built today must still read the body.
    error: Type.Unsafe<HttpErrorCode>({
      type: 'string',
      'x-known-values': HTTP_ERROR_CODES,
      description: `A stable code; a client decides what to do from it (and from the HTTP status for a code it does not know). Today one of ${HTTP_ERROR_CODES.map((c) => `\`${c}\``).join(', ')}.`,
    }),
    message: Type.String({ description: 'The same, in a sentence for people; never carries a secret or a token.' }),
    details: Type.Optional(Type.Array(ErrorDetail, { description: 'Validation problems: entry index, JSON path, reason (at most 50).' })),
    accepted: Type.Optional(ERROR_EXTRA_MEMBERS.accepted),
    unknown: Type.Optional(ERROR_EXTRA_MEMBERS.unknown),
    entry: Type.Optional(ERROR_EXTRA_MEMBERS.entry),
    scope: Type.Optional(ERROR_EXTRA_MEMBERS.scope),
    limit: Type.Optional(ERROR_EXTRA_MEMBERS.limit),
  },
  { description: 'The JSON body of every refusal: {error, message, details?} plus the members some codes add.', allOf: extraRules() },
);
export type ErrorBody = Static<typeof ErrorBody>;

/** The answer to a POST whose every entry is stored. */
export const PostAccepted = Type.Object(
  {
    accepted: Type.Integer({ minimum: 0, description: 'Entries stored (and delivered live), in order.' }),
    dropped: Type.Integer({
      minimum: 0,
      description: 'Envelopes not delivered because they name a banned account. Envelopes from a key that may not re-attribute are dropped silently and not counted (spec 4.3 rule 1).',
    }),
  },
  { additionalProperties: false, description: 'POST answered 200: every entry is stored in the log.' },
);
export type PostAccepted = Static<typeof PostAccepted>;
