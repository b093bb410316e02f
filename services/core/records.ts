// Compiled checks for the records kept in KV (schemas/records.ts).

import type { Static, TSchema } from '@sinclair/typebox';
import type { ValidateFunction } from 'ajv';
import { ajv } from '../../schemas/ajv.js';
import { AuditRecord, BanRecord, KeyRecord, NodeRecord, StreamClaim } from '../../schemas/records.js';

/** Compiled at its first use: a process (a CLI command) reads one or two kinds of record, not all five. */
function parser<S extends TSchema>(schema: S): (value: unknown) => Static<S> | null {
  let check: ValidateFunction<Static<S>> | undefined;
  return (value) => {
    check ??= ajv.compile<Static<S>>(schema);
    return check(value) ? value : null;
  };
}

export const parseKeyRecord = parser(KeyRecord);
export const parseBanRecord = parser(BanRecord);
export const parseStreamClaim = parser(StreamClaim);
export const parseNodeRecord = parser(NodeRecord);
export const parseAuditRecord = parser(AuditRecord);
