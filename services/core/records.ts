// Compiled checks for the records kept in KV (schemas/records.ts).

import type { Static, TSchema } from '@sinclair/typebox';
import { ajv } from '../../schemas/ajv.js';
import { AuditRecord, BanRecord, KeyRecord, NodeRecord, StreamClaim } from '../../schemas/records.js';

function parser<S extends TSchema>(schema: S): (value: unknown) => Static<S> | null {
  const check = ajv.compile<Static<S>>(schema);
  return (value) => (check(value) ? value : null);
}

export const parseKeyRecord = parser(KeyRecord);
export const parseBanRecord = parser(BanRecord);
export const parseStreamClaim = parser(StreamClaim);
export const parseNodeRecord = parser(NodeRecord);
export const parseAuditRecord = parser(AuditRecord);
