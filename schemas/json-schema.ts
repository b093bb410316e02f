// The JSON Schema documents generated from the TypeBox definitions, by file name. TypeBox schemas
// are JSON Schema already; this adds $schema/$id/title and drops nothing but TypeBox's own symbols.

import type { TSchema } from '@sinclair/typebox';
import { CloseEvent } from './close.js';
import { Envelope, PostBody } from './envelope.js';
import { MetaFrame } from './meta.js';
import { PAYLOAD_TYPES } from './payload-types.js';
import { PAYLOAD_SCHEMAS } from './payloads.js';

const BASE_ID = 'urn:channel-relay:schema:';

function document(name: string, title: string, schema: TSchema): string {
  // JSON.stringify drops TypeBox's symbol-keyed metadata.
  const body = JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
  const doc = { $schema: 'http://json-schema.org/draft-07/schema#', $id: `${BASE_ID}${name}`, title, ...body };
  return JSON.stringify(doc, null, 2) + '\n';
}

export function schemaFiles(): Record<string, string> {
  const files: Record<string, string> = {};
  for (const type of PAYLOAD_TYPES) {
    files[`${type}.schema.json`] = document(`${type}.schema.json`, `${type} payload`, PAYLOAD_SCHEMAS[type]);
  }
  files['envelope.schema.json'] = document('envelope.schema.json', 'Re-attribution envelope', Envelope);
  files['post-body.schema.json'] = document('post-body.schema.json', 'POST body: a payload, or an array of payloads and envelopes', PostBody);
  files['meta.schema.json'] = document('meta.schema.json', 'Meta frame (SSE event "meta")', MetaFrame);
  files['close.schema.json'] = document('close.schema.json', 'Close event (SSE event "close")', CloseEvent);
  return files;
}
