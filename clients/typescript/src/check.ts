// A small JSON Schema checker for what the relay delivers: the schemas in generated/schemas.ts are
// the relay's own (written from schemas/), and this knows exactly the keywords they use, as the type
// generator does, so a delivered value that passes is one the generated types allow. No dependency:
// ajv would be ten times the size of the library. Members a schema does not name are tolerated (a
// newer relay may add one; the relay strips unknown ones at ingress), never checked or removed.

/** A JSON Schema as plain data. */
export type JsonSchema = { readonly [keyword: string]: unknown };

/** RFC 4122 form, as ajv-formats checks `format: uuid` at the relay's ingress. */
const UUID = /^(?:urn:uuid:)?[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$/i;

const patterns = new Map<string, RegExp>();
function pattern(source: string): RegExp {
  let re = patterns.get(source);
  if (re === undefined) patterns.set(source, (re = new RegExp(source, 'u')));
  return re;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function typeOk(type: unknown, v: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof v === 'string';
    case 'number':
      return typeof v === 'number';
    case 'integer':
      return Number.isInteger(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'null':
      return v === null;
    case 'array':
      return Array.isArray(v);
    case 'object':
      return isObject(v);
    default:
      throw new Error(`check.ts: unsupported type ${String(type)}`);
  }
}

/** Where `v` breaks `schema` (a JSON pointer and why), or null when it fits. */
export function check(schema: JsonSchema, v: unknown, path = ''): string | null {
  const at = (why: string): string => `${path === '' ? '/' : path}: ${why}`;
  // A list of types (`["string", "null"]`, a nullable member) admits a value of any of them.
  const type = schema['type'];
  if (type !== undefined && !(Array.isArray(type) ? type.some((t) => typeOk(t, v)) : typeOk(type, v))) return at(`expected ${JSON.stringify(type)}`);
  if (schema['const'] !== undefined && v !== schema['const']) return at(`expected ${JSON.stringify(schema['const'])}`);
  const values = schema['enum'];
  if (Array.isArray(values) && !values.includes(v)) return at(`expected one of ${JSON.stringify(values)}`);
  const anyOf = schema['anyOf'];
  if (Array.isArray(anyOf) && !anyOf.some((m: JsonSchema) => check(m, v, path) === null)) return at('matches none of the allowed forms');
  if (typeof v === 'string') {
    if (typeof schema['maxLength'] === 'number' && [...v].length > schema['maxLength']) return at('too long');
    if (typeof schema['minLength'] === 'number' && [...v].length < schema['minLength']) return at('too short');
    if (typeof schema['pattern'] === 'string' && !pattern(schema['pattern']).test(v)) return at('does not match its pattern');
    if (schema['format'] === 'uuid' && !UUID.test(v)) return at('not a UUID');
  }
  if (typeof v === 'number') {
    if (typeof schema['minimum'] === 'number' && v < schema['minimum']) return at('below its minimum');
    if (typeof schema['maximum'] === 'number' && v > schema['maximum']) return at('above its maximum');
  }
  if (Array.isArray(v)) {
    if (typeof schema['maxItems'] === 'number' && v.length > schema['maxItems']) return at('too many items');
    if (typeof schema['minItems'] === 'number' && v.length < schema['minItems']) return at('too few items');
    if (schema['uniqueItems'] === true && new Set(v.map((x) => JSON.stringify(x))).size !== v.length) return at('items repeat');
    const items = schema['items'];
    if (isObject(items)) {
      for (let i = 0; i < v.length; i++) {
        const p = check(items, v[i], `${path}/${i}`);
        if (p !== null) return p;
      }
    }
  }
  return isObject(v) ? checkObject(schema, v, path, at) : null;
}

function checkObject(schema: JsonSchema, v: Record<string, unknown>, path: string, at: (why: string) => string): string | null {
  const required = schema['required'];
  if (Array.isArray(required)) for (const name of required) if (!Object.hasOwn(v, name as string)) return at(`${String(name)} is missing`);
  const not = schema['not'];
  if (isObject(not) && check(not, v, path) === null) return at('has a member it must not have');
  const properties = schema['properties'];
  if (isObject(properties)) {
    for (const [name, sub] of Object.entries(properties)) {
      if (!Object.hasOwn(v, name)) continue;
      const p = check(sub as JsonSchema, v[name], `${path}/${name}`);
      if (p !== null) return p;
    }
  }
  // An open member (a record's values, nbt, a chat component's keys): checked against its schema.
  const open = schema['patternProperties'] ?? (isObject(schema['additionalProperties']) ? { '': schema['additionalProperties'] } : undefined);
  if (isObject(open)) {
    for (const [source, sub] of Object.entries(open)) {
      const re = pattern(source);
      for (const [name, value] of Object.entries(v)) {
        if (isObject(properties) && Object.hasOwn(properties, name)) continue;
        if (!re.test(name)) continue;
        const p = check(sub as JsonSchema, value, `${path}/${name}`);
        if (p !== null) return p;
      }
    }
  }
  return null;
}

/**
 * Where `v` breaks the bounds every payload meets (spec: every number finite, at most `maxDepth`
 * levels counting `v` as level 1), or null. JSON.parse reads 1e400 as Infinity.
 */
export function boundsProblem(v: unknown, maxDepth: number): string | null {
  const stack: Array<{ value: unknown; level: number }> = [{ value: v, level: 1 }];
  while (stack.length > 0) {
    const { value, level } = stack.pop()!;
    if (typeof value === 'number' && !Number.isFinite(value)) return 'a number is not finite';
    if (typeof value !== 'object' || value === null) continue;
    if (level > maxDepth) return `nested deeper than ${maxDepth} levels`;
    for (const child of Object.values(value)) stack.push({ value: child, level: level + 1 });
  }
  return null;
}
