// A stored payload as operators see it (the admin API's replay and tail, the console, `relay replay`
// and `tail`): its sequence in the log, when it was stored, its meta frame and the payload. One
// definition: the relay builds it (services/core/log-entry.ts), the admin API documents it, the
// console reads it.

import { Type, type Static } from '@sinclair/typebox';
import { REGION_NAME_PATTERN } from './event-id.js';
import { MetaFrame } from './meta.js';

export const LogEntry = Type.Object(
  {
    region: Type.Optional(
      Type.String({ pattern: REGION_NAME_PATTERN, description: "On a mesh with regions: the region whose log holds the payload, `seq` being its sequence in that region's log. Absent without regions." }),
    ),
    seq: Type.Integer({ minimum: 1, description: "The sequence of the payload in the log (without regions its `id:` on the stream; with regions in its region's log)." }),
    time: Type.String({ format: 'date-time', description: 'When the relay stored it.' }),
    meta: MetaFrame,
    // Stored payloads passed ingress validation; operators' views read their members as they are.
    data: Type.Unsafe<Record<string, unknown> & { type: string }>(
      Type.Object({ type: Type.String() }, { additionalProperties: true, description: 'The payload as stored.' }),
    ),
  },
  { additionalProperties: false },
);
export type LogEntry = Static<typeof LogEntry>;

/** How operators' views name one entry: its sequence, or with regions `<region>:<sequence>` (the event id's form). */
export function entryName(region: string | null | undefined, seq: number): string {
  return region === null || region === undefined ? String(seq) : `${region}:${seq}`;
}
