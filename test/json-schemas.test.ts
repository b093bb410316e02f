// The JSON Schema files client authors use are generated from the TypeBox definitions; they must
// never drift from what the relay validates.
import { readdirSync, readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { schemaFiles } from '../schemas/json-schema.js';
import { validPayloads } from './helpers/payloads.js';

const dir = new URL('../schemas/json/', import.meta.url);

describe('generated JSON Schema files', () => {
  it('match the TypeBox definitions (run npm run schemas when this fails)', () => {
    const fresh = schemaFiles();
    const committed = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
    expect(committed, 'schema files missing or left over: run npm run schemas').toEqual(Object.keys(fresh).sort());
    for (const [name, text] of Object.entries(fresh)) {
      expect(readFileSync(new URL(name, dir), 'utf8'), `schemas/json/${name} is stale: run npm run schemas`).toBe(text);
    }
  });

  it('accept real payloads and POST bodies, and reject broken ones, with a plain JSON Schema validator', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats.default(ajv);
    const load = (name: string): object => JSON.parse(readFileSync(new URL(name, dir), 'utf8')) as object;
    for (const [type, payload] of Object.entries(validPayloads())) {
      const validate = ajv.compile(load(`${type}.schema.json`));
      expect(validate(payload), `${type}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
    const body = ajv.compile(load('post-body.schema.json'));
    const payloads = Object.values(validPayloads());
    expect(body(payloads[0])).toBe(true);
    expect(body([...payloads, { user: '3f1e8d2a-6b7c-4d5e-9f10-112233445566', agent: 'bridge/1', host: 'x.net', message: payloads[0] }])).toBe(true);
    expect(body([{ type: 'teleport' }])).toBe(false);
    const ping = ajv.getSchema('urn:channel-relay:schema:ping.schema.json')!;
    expect(ping({ type: 'ping', player: '3f1e8d2a6b7c4d5e9f10112233445566', position: { x: 0, y: -65, z: 0, dimension: 'overworld' } })).toBe(false);
    const meta = ajv.compile(load('meta.schema.json'));
    expect(meta({ uuid: '3f1e8d2a-6b7c-4d5e-9f10-112233445566', agent: null, channel: 'play.example.net' })).toBe(true);
  });
});
