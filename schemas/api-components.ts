// The TypeBox schemas as named components of the AsyncAPI and OpenAPI documents. TypeBox inlines a
// shared schema (Player, Position, a payload...) wherever it is used; here every copy of a named one
// becomes a $ref to its component, so code generators in other languages get one class per shape
// (ChatPayload, Player...) instead of anonymous copies. The schemas themselves are not touched:
// the JSON Schema files, the relay's validation and these documents read the same definitions.

import type { TSchema } from '@sinclair/typebox';
import { CloseEvent } from './close.js';
import { ReadyEvent } from './ready.js';
import { Attributes, PAYLOAD_SCHEMAS, Payload } from './payloads.js';
import { ChatComponent, Enchantment, InventorySlot, ItemStack, LogoutPosition, Player, Position, Timestamp, Uuid } from './common.js';
import { Envelope, PostBody } from './envelope.js';
import { ErrorBody, ErrorDetail, PostAccepted } from './http-errors.js';
import { MetaFrame } from './meta.js';
import { PAYLOAD_TYPES, payloadComponentName } from './payload-types.js';

export { payloadComponentName };

/** Every named shape, the smaller ones first (the order of the documents' components). */
const NAMED: ReadonlyArray<readonly [string, TSchema]> = [
  ['Uuid', Uuid],
  ['Timestamp', Timestamp],
  ['Player', Player],
  ['Position', Position],
  ['LogoutPosition', LogoutPosition],
  ['Enchantment', Enchantment],
  ['ItemStack', ItemStack],
  ['InventorySlot', InventorySlot],
  ['Attributes', Attributes],
  ['ChatComponent', ChatComponent],
  ...PAYLOAD_TYPES.map((t) => [payloadComponentName(t), PAYLOAD_SCHEMAS[t]] as const),
  ['Payload', Payload],
  ['Envelope', Envelope],
  ['PostBody', PostBody],
  ['MetaFrame', MetaFrame],
  ['CloseEvent', CloseEvent],
  ['ReadyEvent', ReadyEvent],
  ['ErrorDetail', ErrorDetail],
  ['ErrorBody', ErrorBody],
  ['PostAccepted', PostAccepted],
];

/**
 * The discriminator of the payload union with its mapping, as each document spells it: OpenAPI's
 * object { propertyName, mapping } (also written into the JSON Schema files, where it is an
 * annotation), AsyncAPI's bare property name (its Schema Object has no mapping: each member's
 * `type` const is the mapping, which is how AsyncAPI generators read it).
 */
export function payloadDiscriminator(style: 'openapi' | 'asyncapi', refPrefix: string): JsonValue {
  if (style === 'asyncapi') return 'type';
  return { propertyName: 'type', mapping: Object.fromEntries(PAYLOAD_TYPES.map((t) => [t, `${refPrefix}${payloadComponentName(t)}`])) };
}

/** What the stream carries: the components of the AsyncAPI document. */
export const STREAM_COMPONENTS = [
  'Uuid',
  'Timestamp',
  'Player',
  'Position',
  'LogoutPosition',
  'Enchantment',
  'ItemStack',
  'InventorySlot',
  'Attributes',
  'ChatComponent',
  ...PAYLOAD_TYPES.map(payloadComponentName),
  'Payload',
  'MetaFrame',
  'CloseEvent',
  'ReadyEvent',
  // The body of a refused GET (before the stream opens), the same as a refused POST's.
  'ErrorDetail',
  'ErrorBody',
] as const;

/** The components of the OpenAPI document: all but the stream's events, which only AsyncAPI uses. */
export const ALL_COMPONENTS: readonly string[] = NAMED.map(([name]) => name).filter((n) => n !== 'MetaFrame' && n !== 'CloseEvent' && n !== 'ReadyEvent');

/** The relay's licence (package.json, LICENSE), in the info of both documents. */
export const DOCUMENT_LICENSE: JsonObject = { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' };
/** Who answers for the documents: the maintainers (a deployment's operator answers for its address). */
export const DOCUMENT_CONTACT: JsonObject = { name: 'Channel relay maintainers' };

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** A plain JSON copy (drops TypeBox's symbol-keyed metadata, as the JSON Schema files do). */
export function plain(schema: TSchema): JsonObject {
  return JSON.parse(JSON.stringify(schema)) as JsonObject;
}

/**
 * The named schemas among `names`, each with every nested copy of another one among `names`
 * replaced by `{ $ref: refPrefix + name }`. A copy is recognised by its JSON text, which is exact:
 * TypeBox nests the very object it was given.
 */
export function componentSchemas(names: readonly string[], refPrefix: string): Record<string, JsonObject> {
  const wanted = new Set(names);
  const byText = new Map<string, string>();
  const copies = new Map<string, JsonObject>();
  for (const [name, schema] of NAMED) {
    if (!wanted.has(name)) continue;
    const copy = plain(schema);
    copies.set(name, copy);
    byText.set(JSON.stringify(copy), name);
  }
  const missing = names.filter((n) => !copies.has(n));
  if (missing.length > 0) throw new Error(`no schema named ${missing.join(', ')}`);

  const substitute = (value: JsonValue): JsonValue => {
    if (Array.isArray(value)) return value.map(substitute);
    if (value === null || typeof value !== 'object') return value;
    const name = byText.get(JSON.stringify(value));
    if (name !== undefined) return { $ref: `${refPrefix}${name}` };
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v)]));
  };
  const out: Record<string, JsonObject> = {};
  for (const name of names) {
    const copy = copies.get(name)!;
    // The component itself stays whole; only what it nests becomes references.
    out[name] = Object.fromEntries(Object.entries(copy).map(([k, v]) => [k, substitute(v)]));
  }
  return out;
}
