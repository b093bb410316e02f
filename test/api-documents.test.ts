// The AsyncAPI (stream) and OpenAPI (POST, stream handshake) documents client authors in other
// languages generate code from: valid for real parsers of each format, never stale, and unable to
// drift from the relay (every error code the services use, every close reason).
import { readdirSync, readFileSync } from 'node:fs';
import { Parser, DiagnosticSeverity } from '@asyncapi/parser';
import { compileErrors, dereference, validate } from '@readme/openapi-parser';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { apiDocumentFiles } from '../schemas/api-documents.js';
import { CLOSE_REASON_CODES, CLOSE_REASONS } from '../schemas/close.js';
import { HTTP_ERROR_CODES, HTTP_ERRORS, type HttpErrorEntry } from '../schemas/http-errors.js';
import { CREDENTIAL_PREFIXES } from '../schemas/openapi-parameters.js';
import { PAYLOAD_TYPES } from '../schemas/payload-types.js';
import { BUILTIN_PREFIXES } from '../services/core/credentials.js';
import { validPayloads } from './helpers/payloads.js';

const schemasDir = new URL('../schemas/', import.meta.url);
const read = (name: string): string => readFileSync(new URL(name, schemasDir), 'utf8');
/** The committed OpenAPI document, parsed, as the parser's functions take it. */
type OpenApiInput = Parameters<typeof validate>[0];
const openApi = (): OpenApiInput => JSON.parse(read('openapi.json')) as OpenApiInput;

type Json = Record<string, unknown>;
const asObject = (v: unknown): Json => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`not an object: ${JSON.stringify(v)}`);
  return v as Json;
};
/** Follows a path of member names through plain JSON. */
const at = (root: unknown, ...path: string[]): unknown => path.reduce((v, k) => asObject(v)[k], root);

function ajv(): Ajv {
  const a = new Ajv({ strict: false, allErrors: true });
  addFormats.default(a);
  return a;
}

/** Every `new RelayError('<code>', ...)` in services/, with what it adds. */
interface ThrowSite {
  file: string;
  code: string;
  extra: string[];
  retryAfter: boolean;
}

const servicesDir = new URL('../services/', import.meta.url);
const serviceFiles = (): string[] => readdirSync(servicesDir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));

function throwSites(): ThrowSite[] {
  const root = servicesDir;
  const files = serviceFiles();
  const sites: ThrowSite[] = [];
  for (const file of files) {
    const text = readFileSync(new URL(file, root), 'utf8');
    // Up to the end of the call (`);`, which no message holds) or the next construction (a ternary).
    for (const m of text.matchAll(/new RelayError\(\s*'(\w+)',([\s\S]*?)(?=\);|new RelayError\()/g)) {
      const options = m[2]!;
      const extra = /extra: \{([^}]*)\}/.exec(options)?.[1] ?? '';
      sites.push({
        file,
        code: m[1]!,
        extra: extra.split(',').map((p) => p.split(':')[0]!.trim()).filter((p) => p !== ''),
        retryAfter: /retryAfter:/.test(options),
      });
    }
  }
  return sites;
}

/** Diagnostics that fail the document (the parser's own enum; the linter's is another type). */
const SERIOUS = new Set<number>([DiagnosticSeverity.Error, DiagnosticSeverity.Warning]);

describe('API documents', () => {
  it('are committed as generated (run npm run schemas when this fails)', () => {
    for (const [name, text] of Object.entries(apiDocumentFiles())) {
      expect(read(name), `schemas/${name} is stale: run npm run schemas`).toBe(text);
    }
  });

  it('every code of the error catalogue is one the services use, with the members and Retry-After they send', () => {
    // The status comes from the catalogue itself (services/core/errors.ts reads it); what a site can
    // still get wrong is the members and Retry-After it adds, and a catalogued code nobody uses.
    const servicesText = serviceFiles().map((f) => readFileSync(new URL(f, servicesDir), 'utf8')).join('\n');
    for (const code of HTTP_ERROR_CODES) expect(servicesText, `${code} is used somewhere`).toContain(`'${code}'`);
    const sites = throwSites();
    expect(sites.length).toBeGreaterThan(40);
    expect(new Set(sites.map((s) => s.code)).size).toBeGreaterThan(25);
    for (const site of sites) {
      const entry = HTTP_ERRORS[site.code as keyof typeof HTTP_ERRORS] as HttpErrorEntry | undefined;
      expect(entry, `${site.file}: ${site.code}`).toBeDefined();
      for (const member of site.extra) expect(entry!.extra ?? [], `${site.file}: ${site.code} adds ${member}`).toContain(member);
    }
    for (const code of HTTP_ERROR_CODES) {
      const entry: HttpErrorEntry = HTTP_ERRORS[code];
      const own = sites.filter((s) => s.code === code);
      for (const member of entry.extra ?? []) expect(own.some((s) => s.extra.includes(member)), `${code} documents ${member}`).toBe(true);
      // Retry-After: documented codes send it (at least where a client is still there to read it).
      expect(own.length === 0 || own.some((s) => s.retryAfter) === (entry.retryAfter === true), `${code}: Retry-After`).toBe(true);
      if (entry.retryAfter === true) expect([429, 503]).toContain(entry.status);
    }
  });

  it('the OpenAPI document is valid OpenAPI 3.1 for @readme/openapi-parser', async () => {
    const result = await validate(openApi());
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
    expect(result.warnings).toEqual([]);
  });

  it('the OpenAPI document describes POST and GET on / and /irc with every error code, header and member', async () => {
    const doc = await dereference(openApi());
    const raw = asObject(doc);
    expect(raw['openapi']).toBe('3.1.0');
    const text = read('openapi.json');
    for (const code of HTTP_ERROR_CODES) expect(text, code).toContain(`\`${code}\``);
    const errorEnum = asObject(at(raw, 'components', 'schemas', 'ErrorBody', 'properties', 'error'));
    // An open set: a string with its known values, so a client built today reads tomorrow's code.
    expect(errorEnum['type']).toBe('string');
    expect((errorEnum['x-known-values'] as Json[]).slice().sort()).toEqual([...HTTP_ERROR_CODES].sort());

    for (const path of ['/', '/irc']) {
      for (const method of ['post', 'get'] as const) {
        const operation = asObject(at(raw, 'paths', path, method));
        const responses = asObject(operation['responses']);
        const verb = method.toUpperCase() as 'GET' | 'POST';
        for (const code of HTTP_ERROR_CODES) {
          const entry: HttpErrorEntry = HTTP_ERRORS[code];
          if (!entry.on.includes(verb)) continue;
          const response = asObject(responses[String(entry.status)]);
          expect(response['x-error-codes'], `${verb} ${path} ${code}`).toContain(code);
          if (entry.retryAfter === true) expect(at(response, 'headers'), `${verb} ${path} ${code}`).toHaveProperty('Retry-After');
          for (const member of entry.extra ?? []) expect(response['x-extra-members'], `${code} ${member}`).toContain(member);
        }
        const names = (operation['parameters'] as Json[]).map((p) => `${String(p['in'])}:${String(p['name'])}`);
        expect(names).toContain('query:host');
        expect(names).toContain('header:X-IRC-Multiplayer-Server');
        expect(names).toContain('header:User-Agent');
        for (const prefix of CREDENTIAL_PREFIXES) {
          expect(names).toContain(`header:${prefix}Client-ID`);
          expect(names).toContain(`header:${prefix}Client-Secret`);
        }
        expect(names).toContain(method === 'post' ? 'header:Idempotency-Key' : 'header:Last-Event-ID');
      }
    }
    // The built-in credential spellings are the relay's own.
    expect(['', ...CREDENTIAL_PREFIXES]).toEqual([...BUILTIN_PREFIXES]);
    const schemes = asObject(at(raw, 'components', 'securitySchemes'));
    expect(at(schemes, 'session', 'scheme')).toBe('bearer');
    expect(at(schemes, 'clientId', 'name')).toBe('Client-ID');
    expect(at(schemes, 'clientSecret', 'name')).toBe('Client-Secret');
    expect(at(raw, 'paths', '/', 'post', 'responses', '200', 'content', 'application/json', 'schema', 'required')).toEqual(['accepted', 'dropped']);
  });

  it('the OpenAPI schemas accept what the relay accepts and answers, and refuse what it refuses', async () => {
    const raw = asObject(await dereference(openApi()));
    const schemas = asObject(at(raw, 'components', 'schemas'));
    const a = ajv();
    const body = a.compile(asObject(schemas['PostBody']));
    const payloads = Object.values(validPayloads());
    expect(body(payloads[0]), JSON.stringify(body.errors)).toBe(true);
    expect(body([...payloads, { user: '3f1e8d2a-6b7c-4d5e-9f10-112233445566', agent: 'bridge/1', host: 'x.net', message: payloads[0] }])).toBe(true);
    expect(body([{ type: 'teleport' }])).toBe(false);
    for (const [name, example] of Object.entries(asObject(at(raw, 'paths', '/', 'post', 'requestBody', 'content', 'application/json', 'examples')))) {
      expect(body(at(example, 'value')), `example ${name}`).toBe(true);
    }
    const error = a.compile(asObject(schemas['ErrorBody']));
    expect(error({ error: 'invalid_payload', message: 'x', details: [{ entry: 0, path: '/type', reason: 'r' }] })).toBe(true);
    expect(error({ error: 'publish_failed', message: 'x' }), 'publish_failed needs accepted, unknown and entry').toBe(false);
    expect(error({ error: 'publish_failed', message: 'x', accepted: 2, unknown: 1 })).toBe(false);
    expect(error({ error: 'publish_failed', message: 'x', accepted: 2, unknown: 1, entry: 3 })).toBe(true);
    expect(error({ error: 'missing_scope', message: 'x' })).toBe(false);
    expect(error({ error: 'missing_scope', message: 'x', scope: 'irc.messages.send.chat' })).toBe(true);
    expect(error({ error: 'too_many_streams', message: 'x', limit: 8 })).toBe(true);
    const accepted = a.compile(asObject(schemas['PostAccepted']));
    expect(accepted({ accepted: 3, dropped: 0 })).toBe(true);
    expect(accepted({ accepted: 3 })).toBe(false);
    expect(Object.keys(asObject(at(schemas, 'Payload', 'discriminator', 'mapping'))).sort()).toEqual([...PAYLOAD_TYPES].sort());
  });

  it('the AsyncAPI document parses with @asyncapi/parser with no error or warning', async () => {
    const { document, diagnostics } = await new Parser().parse(read('asyncapi.json'));
    const serious = diagnostics.filter((d) => SERIOUS.has(d.severity));
    expect(serious.map((d) => `${d.code}: ${d.message} at ${d.path.join('.')}`)).toEqual([]);
    expect(document).toBeDefined();
    expect(document!.version()).toBe('3.0.0');

    const operations = document!.operations().all();
    expect(operations.map((o) => o.channels().all().map((c) => c.address()))).toEqual([['/'], ['/irc']]);
    for (const operation of operations) {
      expect(operation.action()).toBe('receive');
      const http = operation.bindings().get('http')!.value<{ method: string; query: { properties: Record<string, unknown> } }>();
      expect(http.method).toBe('GET');
      expect(Object.keys(http.query.properties)).toContain('host');
      const headers = asObject(at(operation.json(), 'x-request-headers', 'properties'));
      for (const h of ['Authorization', 'Client-ID', 'Client-Secret', 'User-Agent', 'X-IRC-Multiplayer-Server', 'Last-Event-ID', 'Accept']) {
        expect(headers, h).toHaveProperty(h);
      }
      expect(operation.messages().all().map((m) => m.name())).toEqual(['ready', 'meta', 'payload', 'meta', 'keepalive', 'close', 'refusal']);
    }
  });

  it('the AsyncAPI document names every close reason with its advice, and its examples fit its schemas', async () => {
    const { document } = await new Parser().parse(read('asyncapi.json'));
    const messages = new Map(document!.components().messages().all().map((m) => [m.id(), m]));
    const close = messages.get('close')!;
    const description = close.description() ?? '';
    const info = document!.info().description() ?? '';
    for (const code of CLOSE_REASON_CODES) {
      const advice = CLOSE_REASONS[code].reconnect ? 'reconnect with Last-Event-ID' : 'do not reconnect';
      expect(description, code).toContain(`\`${code}\`: ${advice}`);
      expect(info, code).toContain(`\`${code}\`: ${advice}`);
    }
    const reasons = asObject(close.payload()!.json()).properties as Json;
    expect(asObject(reasons['reason'])['type']).toBe('string');
    expect(asObject(reasons['reason'])['x-known-values']).toEqual(CLOSE_REASON_CODES);
    expect(close.examples().all().map((e) => at(e.payload(), 'reason'))).toEqual(CLOSE_REASON_CODES);
    expect(info).toMatch(/every 10 s/i);
    expect(info).toMatch(/Pair each `meta` with the next unnamed data event/);
    expect(info).toContain('Last-Event-ID');
    expect(info).toContain('retry:');

    const a = ajv();
    let checked = 0;
    for (const message of messages.values()) {
      const payload = a.compile(asObject(message.payload()!.json()));
      const headers = message.headers() === undefined ? null : a.compile(asObject(message.headers()!.json()));
      for (const example of message.examples().all()) {
        expect(payload(example.payload()), `${message.id()} example ${example.name() ?? ''}: ${JSON.stringify(payload.errors)}`).toBe(true);
        if (headers !== null) expect(headers(example.headers()), `${message.id()} example headers`).toBe(true);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(5 + CLOSE_REASON_CODES.length - 1);
    // Every payload type is a data event of the stream.
    const payloadSchema = asObject(messages.get('payload')!.payload()!.json());
    const stream = a.compile(payloadSchema);
    for (const p of Object.values(validPayloads())) expect(stream(p), JSON.stringify(p)).toBe(true);
  });
});

describe('README', () => {
  it('lists exactly the close reasons of CLOSE_REASONS, in order, with their reconnect advice', () => {
    const lines = readFileSync(new URL('../README.md', import.meta.url), 'utf8').split('\n');
    const start = lines.findIndex((l) => l.startsWith('**Close reasons.**'));
    expect(start, 'README has a "Close reasons" paragraph').toBeGreaterThan(0);
    const header = lines.findIndex((l, i) => i > start && l.startsWith('| code |'));
    const rows: string[][] = [];
    for (const line of lines.slice(header + 2)) {
      if (!line.startsWith('|')) break;
      rows.push(line.split('|').slice(1, -1).map((c) => c.trim()));
    }
    expect(rows.map((r) => r[0])).toEqual(CLOSE_REASON_CODES.map((c) => `\`${c}\``));
    for (const [cell, reconnect] of rows.map((r, i) => [r[1]!, CLOSE_REASONS[CLOSE_REASON_CODES[i]!].reconnect] as const)) {
      expect(cell.startsWith(reconnect ? 'yes' : 'no'), cell).toBe(true);
    }
  });

  it('points client authors to docs/CLIENTS.md, the two documents and the library', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    for (const link of ['docs/CLIENTS.md', 'schemas/openapi.json', 'schemas/asyncapi.json', 'clients/typescript/', '@channel-relay/client']) {
      expect(readme).toContain(link);
    }
  });
});

describe('docs/CLIENTS.md', () => {
  it('names every close reason and links the documents, the JSON Schemas and the library', () => {
    const text = readFileSync(new URL('../docs/CLIENTS.md', import.meta.url), 'utf8');
    for (const code of CLOSE_REASON_CODES) expect(text, code).toContain(`\`${code}\``);
    for (const link of ['../schemas/openapi.json', '../schemas/asyncapi.json', '../schemas/json/', '../clients/typescript/', '@channel-relay/client']) {
      expect(text).toContain(link);
    }
  });
});
