// TypeScript declarations for the client library, written from the TypeBox definitions in schemas/
// (the same objects schemas/json/ is generated from), so the wire types have one source of truth.
// TypeBox schemas are plain JSON Schema; this emitter knows the handful of keywords they use and
// throws on any other, so a schema change it cannot express fails the build instead of producing a
// type that lies. Shapes shared by several payloads (Player, Position, ...) get their own names.

import { CLOSE_REASON_CODES, CLOSE_REASONS, CloseEvent } from '../schemas/close.js';
import { ChatComponent, Dimension, Enchantment, InventorySlot, ItemStack, LogoutPosition, Player, Position, Timestamp, Uuid } from '../schemas/common.js';
import { Envelope, PostBody } from '../schemas/envelope.js';
import { HTTP_ERROR_CODES } from '../schemas/http-errors.js';
import { MetaFrame } from '../schemas/meta.js';
import { PAYLOAD_TYPES } from '../schemas/payload-types.js';
import { ReadyEvent } from '../schemas/ready.js';
import { Attributes, Payload, PAYLOAD_SCHEMAS } from '../schemas/payloads.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = { [key: string]: Json };

/** Keywords that only describe (documentation) or constrain values TypeScript cannot express. */
const ANNOTATIONS = new Set(['description', 'title', '$schema', '$id', 'x-expected', 'discriminator']);
const CONSTRAINTS = ['format', 'pattern', 'minimum', 'maximum', 'minLength', 'maxLength', 'minItems', 'maxItems', 'uniqueItems'] as const;
const STRUCTURE = new Set(['type', 'const', 'enum', 'x-known-values', 'anyOf', 'oneOf', 'properties', 'required', 'additionalProperties', 'patternProperties', 'items', 'not']);

/** A TypeBox schema as the JSON Schema it is (JSON.stringify drops TypeBox's symbol keys). */
function plain(schema: unknown): Schema {
  return JSON.parse(JSON.stringify(schema)) as Schema;
}

function isSchema(v: Json | undefined): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function pascal(type: string): string {
  return type.replace(/(^|_)([a-z])/g, (_m, _sep: string, c: string) => c.toUpperCase());
}

function key(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : JSON.stringify(name);
}

function docComment(schema: Schema, indent: string): string {
  const lines: string[] = [];
  if (typeof schema['description'] === 'string') lines.push(...schema['description'].split('\n'));
  for (const c of CONSTRAINTS) if (schema[c] !== undefined) lines.push(`@${c} ${typeof schema[c] === 'string' ? schema[c] : JSON.stringify(schema[c])}`);
  if (lines.length === 0) return '';
  const safe = lines.map((l) => l.replace(/\*\//g, '*\\/'));
  return `${indent}/**\n${safe.map((l) => `${indent} * ${l}`.trimEnd()).join('\n')}\n${indent} */\n`;
}

interface Declaration {
  name: string;
  schema: Schema;
}

function literalUnion(values: Json[]): string {
  return values.map((v) => JSON.stringify(v)).join(' | ');
}

class Emitter {
  private readonly named = new Map<string, string>();
  /** Declared known-value sets (`KnownCloseReason`), by their values. */
  private readonly knownNames = new Map<string, string>();

  constructor(declarations: Declaration[]) {
    for (const d of declarations) {
      const k = JSON.stringify(d.schema);
      if (!this.named.has(k)) this.named.set(k, d.name);
      const values = d.schema['enum'];
      if (Array.isArray(values) && d.name.startsWith('Known')) this.knownNames.set(JSON.stringify(values), d.name);
    }
  }

  declaration(d: Declaration): string {
    const doc = docComment(d.schema, '');
    const body = this.type(d.schema, '', d.name);
    const isInterface = d.schema['type'] === 'object' && d.schema['anyOf'] === undefined && d.schema['oneOf'] === undefined && d.schema['patternProperties'] === undefined;
    return isInterface ? `${doc}export interface ${d.name} ${body}\n` : `${doc}export type ${d.name} = ${body};\n`;
  }

  /** The TypeScript type of a schema; `self` is the declaration being written (never a reference to itself). */
  private type(schema: Schema, indent: string, self?: string): string {
    for (const k of Object.keys(schema)) {
      if (!ANNOTATIONS.has(k) && !STRUCTURE.has(k) && !(CONSTRAINTS as readonly string[]).includes(k)) {
        throw new Error(`schema keyword "${k}" is not supported by scripts/client-types.ts: teach it, or the generated types would be wrong`);
      }
    }
    const name = this.named.get(JSON.stringify(schema));
    if (name !== undefined && name !== self) return name;
    if (schema['const'] !== undefined) return JSON.stringify(schema['const']);
    const known = schema['x-known-values'];
    // x-known-values is an open set (close reasons, error codes; DESIGN.md section 6): the values
    // known today, named when a declaration names them (for autocomplete), or any other string a
    // newer relay sends.
    if (Array.isArray(known)) return `${this.knownNames.get(JSON.stringify(known)) ?? literalUnion(known)} | (string & {})`;
    const literals = schema['enum'];
    if (Array.isArray(literals)) return literalUnion(literals);
    const type = schema['type'];
    if (Array.isArray(type)) return type.map((t) => this.type({ ...schema, type: t }, indent)).join(' | ');
    if (type === undefined) {
      const union = schema['anyOf'] ?? schema['oneOf'];
      if (Array.isArray(union)) return union.map((m) => this.member(m, indent)).join(' | ');
      return 'unknown';
    }
    switch (type) {
      case 'string':
        return 'string';
      case 'number':
      case 'integer':
        return 'number';
      case 'boolean':
        return 'boolean';
      case 'null':
        return 'null';
      case 'array': {
        const items = schema['items'];
        if (items === undefined) return 'unknown[]';
        if (!isSchema(items)) throw new Error('array items must be one schema');
        const inner = this.type(items, indent);
        return /^[A-Za-z0-9_]+$/.test(inner) ? `${inner}[]` : `Array<${inner}>`;
      }
      case 'object':
        return this.object(schema, indent);
      default:
        throw new Error(`schema type ${JSON.stringify(type)} is not supported`);
    }
  }

  private member(m: Json, indent: string): string {
    if (!isSchema(m)) throw new Error('anyOf members must be schemas');
    return this.type(m, indent);
  }

  private object(schema: Schema, indent: string): string {
    const properties = isSchema(schema['properties']) ? schema['properties'] : {};
    const required = new Set(Array.isArray(schema['required']) ? schema['required'].map(String) : []);
    const inner = `${indent}  `;
    const lines: string[] = [];
    for (const [name, value] of Object.entries(properties)) {
      if (!isSchema(value)) throw new Error(`property ${name} must be a schema`);
      // A named shape carries its own documentation; a property of that shape repeats none of it.
      const doc = this.named.has(JSON.stringify(value)) ? '' : docComment(value, inner);
      lines.push(`${doc}${inner}${key(name)}${required.has(name) ? '' : '?'}: ${this.type(value, inner)};`);
    }
    const patterns = schema['patternProperties'];
    const additional = schema['additionalProperties'];
    const open = isSchema(patterns) ? Object.values(patterns) : isSchema(additional) ? [additional] : [];
    if (open.length > 0) {
      // Named members must fit the index signature, so it is `unknown` whenever there are any.
      const valueType = Object.keys(properties).length > 0 ? 'unknown' : open.map((m) => this.member(m, inner)).join(' | ');
      lines.push(`${inner}[key: string]: ${valueType};`);
    }
    let body = lines.length === 0 ? '{}' : `{\n${lines.join('\n')}\n${indent}}`;
    const not = schema['not'];
    if (not !== undefined) {
      // The one negation the schemas use: "no member named k" (the envelope has no `type`), which a
      // closed object (additionalProperties: false) without that property already says.
      const names = isSchema(not) && Array.isArray(not['required']) && Object.keys(not).length === 1 ? not['required'].map(String) : null;
      if (names === null || additional !== false || names.some((n) => n in properties)) {
        throw new Error(`unsupported "not": ${JSON.stringify(not)}`);
      }
    }
    const anyOf = schema['anyOf'];
    if (anyOf !== undefined) {
      // "At least one of these members is present" (the envelope's agent or its legacy userAgent).
      if (!Array.isArray(anyOf)) throw new Error('anyOf must be an array');
      const alternatives = anyOf.map((m) => {
        const names = isSchema(m) && Array.isArray(m['required']) && Object.keys(m).length === 1 ? m['required'].map(String) : null;
        if (names === null || names.some((n) => !isSchema(properties[n]))) throw new Error(`unsupported object-level anyOf: ${JSON.stringify(m)}`);
        return `{ ${names.map((n) => `${key(n)}: ${this.type(properties[n] as Schema, inner)}`).join('; ')} }`;
      });
      body = `${body} & (${alternatives.join(' | ')})`;
    }
    return body;
  }
}

/** The contents of clients/typescript/src/generated/wire.ts. */
export function clientWireTypes(): string {
  const payloadNames = PAYLOAD_TYPES.map((t) => `${pascal(t)}Payload`);
  const declarations: Declaration[] = [
    { name: 'Uuid', schema: plain(Uuid) },
    { name: 'Timestamp', schema: plain(Timestamp) },
    { name: 'Dimension', schema: plain(Dimension) },
    { name: 'Player', schema: plain(Player) },
    { name: 'Position', schema: plain(Position) },
    { name: 'LogoutPosition', schema: plain(LogoutPosition) },
    { name: 'Enchantment', schema: plain(Enchantment) },
    { name: 'ItemStack', schema: plain(ItemStack) },
    { name: 'InventorySlot', schema: plain(InventorySlot) },
    { name: 'ChatComponent', schema: plain(ChatComponent) },
    { name: 'Attributes', schema: plain(Attributes) },
    ...PAYLOAD_TYPES.map((t, i) => ({ name: payloadNames[i]!, schema: plain(PAYLOAD_SCHEMAS[t]) })),
    { name: 'Payload', schema: plain(Payload) },
    { name: 'Envelope', schema: plain(Envelope) },
    { name: 'PostBody', schema: plain(PostBody) },
    { name: 'MetaFrame', schema: plain(MetaFrame) },
    { name: 'KnownCloseReason', schema: { enum: CLOSE_REASON_CODES, description: 'The close reasons this version of the library knows (the catalogue of schemas/close.ts).' } },
    { name: 'CloseEvent', schema: plain(CloseEvent) },
    { name: 'ReadyEvent', schema: plain(ReadyEvent) },
  ];
  const emitter = new Emitter(declarations);
  const out: string[] = [
    '// Generated by scripts/generate-client-types.ts from the TypeBox definitions in schemas/ (the ones',
    '// schemas/json/ is written from) and the error codes of services/core/errors.ts. Do not edit:',
    '// `npm run client-types` rewrites it (the client build does too); a test fails when it is stale.',
    '',
  ];
  for (const d of declarations) out.push(emitter.declaration(d));
  out.push(`/** The eleven payload types, in the relay's order. */`);
  out.push(`export const PAYLOAD_TYPES = ${JSON.stringify(PAYLOAD_TYPES)} as const;\n`);
  out.push(`/** The discriminant of {@link Payload}. */`);
  out.push(`export type PayloadType = Payload['type'];\n`);
  out.push(`/** Why the relay ended a stream, as the library reports it: a reason of the catalogue (one it does not know is \`unknown_close\`). */`);
  out.push(`export type CloseReasonCode = KnownCloseReason;\n`);
  out.push(`/** The relay's close catalogue: each reason with its reconnect advice. */`);
  out.push(`export const CLOSE_REASONS = ${JSON.stringify(CLOSE_REASONS, null, 2)} as const satisfies Record<CloseReasonCode, { message: string; reconnect: boolean; retryAfterMs?: number }>;\n`);
  out.push(`/** Every \`error\` code of the relay's refusal bodies (\`{"error", "message", "details"?}\`) known to this version. */`);
  out.push(`export type KnownHttpErrorCode =\n${HTTP_ERROR_CODES.map((c) => `  | ${JSON.stringify(c)}`).join('\n')};\n`);
  out.push(`/** The \`error\` of a refusal: a known code, or one a newer relay added (an open set: decide by the HTTP status). */`);
  out.push(`export type HttpErrorCode = KnownHttpErrorCode | (string & {});`);
  return out.join('\n') + '\n';
}
