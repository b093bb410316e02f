// The re-attribution envelope (spec 4.3): an explicit sender around an ordinary payload. It has no
// `type`, which is what tells it apart from a payload.

import { Type, type Static } from '@sinclair/typebox';
import { Uuid } from './common.js';
import { Payload } from './payloads.js';
import { AGENT_MAX, PLAIN_TEXT_PATTERN, UNSAFE_TEXT_WORDS } from './text.js';

/**
 * The envelope's agent (either spelling). It reaches every client's meta frame and the operators'
 * replay, so it follows the one text rule (text.ts); it also travels in a NATS header.
 */
const agentText = (description: string) =>
  Type.String({
    maxLength: AGENT_MAX,
    pattern: PLAIN_TEXT_PATTERN,
    'x-expected': `text without ${UNSAFE_TEXT_WORDS}`,
    description: `${description} At most ${AGENT_MAX} characters, without ${UNSAFE_TEXT_WORDS}.`,
  });
const Agent = agentText('Becomes meta.agent. Required unless the legacy `userAgent` is given.');
const UserAgent = agentText('Legacy spelling of `agent`; `agent` wins.');

export const Envelope = Type.Object(
  {
    user: Uuid,
    agent: Type.Optional(Agent),
    userAgent: Type.Optional(UserAgent),
    host: Type.Optional(Type.String({ description: 'Target multiplayer server; falls back to the request channel.' })),
    channel: Type.Optional(Type.String({ description: 'Legacy spelling of `host`; `host` wins.' })),
    message: Payload,
  },
  {
    additionalProperties: false,
    not: { required: ['type'] },
    anyOf: [{ required: ['agent'] }, { required: ['userAgent'] }],
    description: 'Re-attribution envelope: honoured only for keys with irc.connection.unauthenticated.',
  },
);
export type Envelope = Static<typeof Envelope>;

/** The envelope as ingress checks it before validating `message` by its own type. */
export const EnvelopeShell = Type.Object(
  {
    user: Uuid,
    agent: Type.Optional(Agent),
    userAgent: Type.Optional(UserAgent),
    host: Type.Optional(Type.String()),
    channel: Type.Optional(Type.String()),
    message: Type.Record(Type.String(), Type.Unknown()),
  },
  { additionalProperties: false },
);

export const BATCH_MAX_DEFAULT = 256;

/**
 * POST body: one payload, or an array of payloads and envelopes. oneOf, as the members exclude each
 * other (an object or an array; an envelope has no `type`). Ingress checks each entry on its own.
 */
export const PostBody = Type.Unsafe<Payload | Array<Payload | Envelope>>({
  oneOf: [
    Payload,
    Type.Array(Type.Unsafe({ oneOf: [Payload, Envelope] }), { description: `At most ${BATCH_MAX_DEFAULT} entries by default.` }),
  ],
});
