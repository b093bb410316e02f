// The re-attribution envelope (spec 4.3): an explicit sender around an ordinary payload. It has no
// `type`, which is what tells it apart from a payload.

import { Type, type Static } from '@sinclair/typebox';
import { Uuid } from './common.js';
import { Payload } from './payloads.js';

export const ENVELOPE_AGENT_MAX = 256;

export const Envelope = Type.Object(
  {
    user: Uuid,
    agent: Type.Optional(Type.String({ maxLength: ENVELOPE_AGENT_MAX, description: 'Becomes meta.agent. Required unless the legacy `userAgent` is given.' })),
    userAgent: Type.Optional(Type.String({ maxLength: ENVELOPE_AGENT_MAX, description: 'Legacy spelling of `agent`; `agent` wins.' })),
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
    agent: Type.Optional(Type.String({ maxLength: ENVELOPE_AGENT_MAX })),
    userAgent: Type.Optional(Type.String({ maxLength: ENVELOPE_AGENT_MAX })),
    host: Type.Optional(Type.String()),
    channel: Type.Optional(Type.String()),
    message: Type.Record(Type.String(), Type.Unknown()),
  },
  { additionalProperties: false },
);

export const BATCH_MAX_DEFAULT = 256;

/** POST body: one payload, or an array of payloads and envelopes. */
export const PostBody = Type.Union([
  Payload,
  Type.Array(Type.Union([Payload, Envelope]), { description: `At most ${BATCH_MAX_DEFAULT} entries by default.` }),
]);
