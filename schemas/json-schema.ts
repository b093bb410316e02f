// The JSON Schema documents generated from the TypeBox definitions, by file name. Each file is its
// shape under a code-friendly title (the class name generators give it), with every shared shape it
// uses (Player, Position, a payload...) as a named definition it references, never an inline copy.

import { componentSchemas, payloadDiscriminator, type JsonObject, type JsonValue } from './api-components.js';
import { PAYLOAD_TYPES, payloadComponentName } from './payload-types.js';

const BASE_ID = 'urn:channel-relay:schema:';
const DEFINITIONS = '#/definitions/';
const NAMES = [
  'Uuid', 'Timestamp', 'Player', 'Position', 'LogoutPosition', 'Enchantment', 'ItemStack', 'InventorySlot', 'Attributes', 'ChatComponent',
  ...PAYLOAD_TYPES.map(payloadComponentName), 'Payload', 'Envelope', 'PostBody', 'MetaFrame', 'CloseEvent', 'ReadyEvent',
];

/** The names `value` references, and theirs, in order of first use. */
function referenced(value: JsonValue, all: Record<string, JsonObject>, out: Set<string>): Set<string> {
  if (Array.isArray(value)) for (const v of value) referenced(v, all, out);
  else if (value !== null && typeof value === 'object') {
    const ref = value['$ref'];
    if (typeof ref === 'string' && ref.startsWith(DEFINITIONS)) {
      const name = ref.slice(DEFINITIONS.length);
      if (!out.has(name)) {
        out.add(name);
        referenced(all[name]!, all, out);
      }
    }
    for (const v of Object.values(value)) referenced(v, all, out);
  }
  return out;
}

function document(file: string, name: string, all: Record<string, JsonObject>): string {
  const root = all[name]!;
  const uses = [...referenced(root, all, new Set())].filter((n) => n !== name);
  const definitions = Object.fromEntries(uses.map((n) => [n, all[n]!]));
  const doc = { $schema: 'http://json-schema.org/draft-07/schema#', $id: `${BASE_ID}${file}`, title: name, ...root, ...(uses.length > 0 ? { definitions } : {}) };
  return JSON.stringify(doc, null, 2) + '\n';
}

export function schemaFiles(): Record<string, string> {
  const all = componentSchemas(NAMES, DEFINITIONS);
  all['Payload'] = { ...all['Payload']!, discriminator: payloadDiscriminator('openapi', DEFINITIONS) };
  const files: Record<string, string> = {};
  for (const type of PAYLOAD_TYPES) files[`${type}.schema.json`] = document(`${type}.schema.json`, payloadComponentName(type), all);
  files['envelope.schema.json'] = document('envelope.schema.json', 'Envelope', all);
  files['post-body.schema.json'] = document('post-body.schema.json', 'PostBody', all);
  files['meta.schema.json'] = document('meta.schema.json', 'MetaFrame', all);
  files['close.schema.json'] = document('close.schema.json', 'CloseEvent', all);
  files['ready.schema.json'] = document('ready.schema.json', 'ReadyEvent', all);
  return files;
}
