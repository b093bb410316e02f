// The `ready` event (DESIGN.md section 6): the relay says a stream is open once it has subscribed it,
// as a named SSE event a program reads without matching a comment's words. Clients that listen only
// to `meta` and unnamed events never see it; the `: connected to <channel>` comment that follows it
// stays for people reading the raw stream.

import { Type, type Static } from '@sinclair/typebox';
import { EVENT_ID_PATTERN, MAX_EVENT_ID_LENGTH } from './event-id.js';
import { MIN_RETRY_MS } from './stream-timings.js';

/** The data of the SSE event `ready`. */
export const ReadyEvent = Type.Object(
  {
    channel: Type.String({ description: 'The readable (normalised) channel the stream hears; `*` for a bridge stream that hears every channel.' }),
    // type: [integer, null] rather than anyOf: generators make it a nullable Long, not an Object.
    resumedAfter: Type.Unsafe<number | null>({
      type: ['integer', 'null'],
      format: 'int64',
      minimum: 0,
      description: 'The Last-Event-ID the stream resumes after (what it missed follows), or null for a fresh stream.',
    }),
    resumedAfterId: Type.Optional(
      Type.String({
        pattern: EVENT_ID_PATTERN,
        maxLength: MAX_EVENT_ID_LENGTH,
        description: 'On a mesh with regions, the Last-Event-ID the stream resumes after, as the relay read it (`resumedAfter` is then null); absent otherwise.',
      }),
    ),
    retryMs: Type.Integer({ minimum: MIN_RETRY_MS, description: 'The reconnect wait the relay advises, the same as the `retry:` field that opened the stream.' }),
  },
  { additionalProperties: false, description: 'Sent as `event: ready` once the relay has subscribed the stream, before any frame: from here on nothing published to the channel is missed.' },
);
export type ReadyEvent = Static<typeof ReadyEvent>;
