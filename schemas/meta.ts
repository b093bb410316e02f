// The meta frame (spec 2.3) that precedes every delivered payload on the SSE stream.

import { Type, type Static } from '@sinclair/typebox';

export const MetaFrame = Type.Object(
  {
    uuid: Type.String({ format: 'uuid', description: 'The sender: the authenticated account or the envelope user.' }),
    // type: [string, null] rather than anyOf: generators make it a nullable String, not an Object.
    agent: Type.Unsafe<string | null>({ type: ['string', 'null'], description: "The sender's user agent, null when absent." }),
    channel: Type.String({ description: 'The readable (normalised) channel name.' }),
  },
  { additionalProperties: false },
);
export type MetaFrame = Static<typeof MetaFrame>;
