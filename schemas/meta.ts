// The meta frame (spec 2.3) that precedes every delivered payload on the SSE stream.

import { Type, type Static } from '@sinclair/typebox';
import { UNSAFE_TEXT_WORDS } from './text.js';

export const MetaFrame = Type.Object(
  {
    uuid: Type.String({ format: 'uuid', description: 'The sender: the authenticated account or the envelope user.' }),
    // type: [string, null] rather than anyOf: generators make it a nullable String, not an Object.
    agent: Type.Unsafe<string | null>({ type: ['string', 'null'], description: `The sender's user agent, null when absent: text without ${UNSAFE_TEXT_WORDS}, which the relay refuses where an agent enters.` }),
    channel: Type.String({ description: 'The readable (normalised) channel name.' }),
    // The published proxy client's shape (DESIGN.md section 6), added beside the spec's fields when the
    // operator sets META_AUTHORITATIVE_SENDER=true; never instead of them.
    userAgent: Type.Optional(
      Type.Unsafe<string | null>({ type: ['string', 'null'], description: 'The same as agent; present only where the relay sets META_AUTHORITATIVE_SENDER=true.' }),
    ),
    authoritativeSender: Type.Optional(
      Type.Object(
        {
          id: Type.String({ format: 'uuid', description: "The same as uuid: for a bridge's envelope, whatever UUID the bridge named." }),
          username: Type.Unsafe<string | null>({
            type: ['string', 'null'],
            description: "The sender's profile name from its verified session; null for a bridge's envelope (the relay knows no name for it) and the relay's own keepalives: with an id other than the nil UUID, null marks an envelope.",
          }),
        },
        {
          additionalProperties: false,
          title: 'AuthoritativeSender',
          description:
            'Present only where the relay sets META_AUTHORITATIVE_SENDER=true. Exactly as authoritative as the key that sent the frame: a checked session for a bare payload, only the word of a bridge key (irc.connection.unauthenticated) for an envelope.',
        },
      ),
    ),
  },
  { additionalProperties: false },
);
export type MetaFrame = Static<typeof MetaFrame>;

/** Which meta frame a gateway writes: the spec's fields, or those and the published client's. */
export type MetaShape = 'spec' | 'spec+sender';
