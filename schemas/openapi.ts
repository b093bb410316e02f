// The OpenAPI 3.1 description of POST / and /irc (sending payloads) and of the GET that opens the
// stream (its handshake and refusals; what flows on it is the AsyncAPI document's part). Built as
// a plain object from the TypeBox schemas and the error catalogue, so there is one source of truth;
// `npm run schemas` writes it to schemas/openapi.json.

import { ADMIN_SECURITY_SCHEME, adminComponents, adminPaths } from './admin-openapi.js';
import { ALL_COMPONENTS, componentSchemas, DOCUMENT_CONTACT, DOCUMENT_LICENSE, payloadDiscriminator, type JsonObject } from './api-components.js';
import { BATCH_MAX_DEFAULT } from './envelope.js';
import { HTTP_ERROR_CODES, HTTP_ERRORS, type HttpErrorCode, type HttpErrorEntry, type StreamOrPost } from './http-errors.js';
import { COMMON_PARAMETERS, paramRef, PARAMETERS, SECURITY, SECURITY_SCHEMES } from './openapi-parameters.js';

const SCHEMA = '#/components/schemas/';
const ref = (name: string): JsonObject => ({ $ref: `${SCHEMA}${name}` });

const CLIENTS_DOC = 'docs/CLIENTS.md';

const DESCRIPTION = `How to send payloads to a channel relay, and how to open its Server-Sent Events stream.

One address serves both verbs: POST sends, GET opens the stream; \`/\` and \`/irc\` answer identically.
What flows on the stream (the \`meta\` + data pairs, \`close\`, keepalives, \`id:\` and \`retry:\`) is
described by the AsyncAPI document beside this one (\`schemas/asyncapi.json\`). The rules every client must
follow (credentials, back-off, resume, eviction, idempotent resends) are in \`${CLIENTS_DOC}\`, as a checklist.

**Authentication.** Every request carries \`Authorization: Bearer <game access token>\` and the client
build's credentials (\`Client-ID\` and \`Client-Secret\`, or one of their other spellings). A valid session
with missing or wrong credentials gets the account **banned** (spec A3): never send one without the other.
Bridges (keys with \`irc.connection.unauthenticated\`) send the credentials alone.

**Checks, in order** (the first failure answers): no Authorization (bridges only, else 401
\`unauthorized\`); session valid (401 \`invalid_session\`; 429 \`too_many_session_checks\` when the client's
address has too many new sessions being checked; 503 when the profile API or the relay cannot say; never a
ban); account banned (403 \`banned\`); client credentials (missing or wrong: ban, 403 \`banned\`); key
expired or revoked (403); scope (403 \`missing_scope\`).

**Errors.** Every refusal is JSON \`{"error": "<code>", "message": "<sentence>"}\`, with \`details\` for
validation problems and the members a few codes add (\`accepted\` and \`unknown\` on \`publish_failed\`,
\`scope\` on \`missing_scope\`, \`limit\` on \`too_many_streams\`). 429 and 503 carry \`Retry-After\`
(seconds): a 429 says this client is over its share (per address, account or API key), a 5xx that the
relay or what it depends on is in trouble. Each response below lists its codes in \`x-error-codes\`; decide from the code, and from the
status for a code you do not know. The whole catalogue:

${errorTable()}`;

function errorTable(): string {
  const rows = HTTP_ERROR_CODES.map((code) => {
    const e: HttpErrorEntry = HTTP_ERRORS[code];
    const on = e.on.length === 0 ? 'other paths' : e.on.join(', ');
    return `| ${e.status} | \`${code}\` | ${on} | ${e.when} | ${e.action} |`;
  });
  return ['| status | code | on | when | what the client does |', '|---|---|---|---|---|', ...rows].join('\n');
}

const HEADERS: JsonObject = {
  RetryAfter: { description: 'Seconds to wait before trying again.', schema: { type: 'integer', minimum: 0 } },
};

/** The name of the shared response for the refusals of `method` with `status`. */
const responseName = (method: StreamOrPost, status: number): string => `${method === 'GET' ? 'StreamRefused' : 'SendRefused'}${status}`;

/** The statuses `method` can be refused with, each with its codes, in order. */
function refusals(method: StreamOrPost): Array<[number, HttpErrorCode[]]> {
  const byStatus = new Map<number, HttpErrorCode[]>();
  for (const code of HTTP_ERROR_CODES) {
    const entry: HttpErrorEntry = HTTP_ERRORS[code];
    if (!entry.on.includes(method)) continue;
    byStatus.set(entry.status, [...(byStatus.get(entry.status) ?? []), code]);
  }
  return [...byStatus].sort(([a], [b]) => a - b);
}

/** One shared response per (method, status), listing its codes; / and /irc refer to the same ones. */
function errorResponses(): JsonObject {
  const responses: JsonObject = {};
  for (const method of ['POST', 'GET'] as const) {
    for (const [status, codes] of refusals(method)) {
      const entries = codes.map((c): [HttpErrorCode, HttpErrorEntry] => [c, HTTP_ERRORS[c]]);
      const lines = entries.map(([c, e]) => `- \`${c}\`: ${e.when} ${e.action}`);
      const extra = [...new Set(entries.flatMap(([, e]) => e.extra ?? []))];
      const response: JsonObject = {
        description: [`Refused (${codes.join(', ')}).`, ...lines].join('\n'),
        'x-error-codes': codes,
        content: { 'application/json': { schema: ref('ErrorBody') } },
      };
      if (extra.length > 0) response['x-extra-members'] = extra;
      if (entries.some(([, e]) => e.retryAfter === true)) response['headers'] = { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } };
      responses[responseName(method, status)] = response;
    }
  }
  return responses;
}

function refusalRefs(method: StreamOrPost): JsonObject {
  return Object.fromEntries(refusals(method).map(([status]) => [String(status), { $ref: `#/components/responses/${responseName(method, status)}` }]));
}

const EXAMPLE_UUID = '3f1e8d2a-6b7c-4d5e-9f10-112233445566';

function postOperation(path: string): JsonObject {
  return {
    operationId: path === '/' ? 'sendPayloads' : 'sendPayloadsIrc',
    tags: ['send'],
    summary: path === '/' ? 'Send payloads to the channel' : 'Send payloads to the channel (same as POST /)',
    description: `One payload, or an array of up to ${BATCH_MAX_DEFAULT} (by default) payloads and re-attribution envelopes. The whole batch is checked before anything is stored: any invalid entry or unknown \`type\` is a 400, any type the key may not send a 403, and nothing is stored. Entries are then stored in order and delivered as one \`meta\` + data pair each. Unknown members of known payloads are stripped; \`dimension\` is lower-cased and UUIDs are delivered in dashed lower case. Envelopes from a key without \`irc.connection.unauthenticated\` are dropped silently (spec 4.3).`,
    parameters: [...COMMON_PARAMETERS.map(paramRef), paramRef('idempotencyKey')],
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: ref('PostBody'),
          examples: {
            one: { summary: 'One payload', value: { type: 'chat', message: 'hello' } },
            batch: {
              summary: 'A batch, delivered in order',
              value: [
                { type: 'chat', message: 'hello' },
                { type: 'ping', player: EXAMPLE_UUID, position: { x: 10, y: 64, z: -3, dimension: 'overworld' }, color: '#ff8800' },
              ],
            },
            bridge: {
              summary: 'A bridge re-attributing a line to a player on another server',
              value: [{ user: EXAMPLE_UUID, agent: 'discord-bridge/2.0', host: 'play.example.net', message: { type: 'chat', message: 'hi from Discord' } }],
            },
          },
        },
      },
    },
    responses: {
      '200': {
        description: 'Every entry is stored in the log (and delivered live).',
        content: { 'application/json': { schema: ref('PostAccepted'), example: { accepted: 2, dropped: 0 } } },
      },
      ...refusalRefs('POST'),
    },
  };
}

function getOperation(path: string): JsonObject {
  return {
    operationId: path === '/' ? 'openStream' : 'openStreamIrc',
    tags: ['stream'],
    summary: path === '/' ? 'Open the SSE stream of the channel' : 'Open the SSE stream of the channel (same as GET /)',
    description:
      'Send `Accept: text/event-stream`. One stream per (account, channel) holds across the whole mesh: opening a second evicts the first, which receives `event: close` with reason `evicted` and must not reconnect. The refusals below come before the stream opens; once it is open, everything (the end included) arrives as SSE events: see schemas/asyncapi.json.',
    parameters: [...COMMON_PARAMETERS.map(paramRef), paramRef('lastEventId')],
    responses: {
      '200': {
        description:
          'The stream, held open for the life of the session. It starts with `retry: 2000` and an SSE comment naming the channel, then carries `meta` + data pairs (data events with `id:`), a server keepalive pair every 10 s, and `event: close` before the relay ends it. Response headers: `Cache-Control: no-cache, no-transform`, `X-Accel-Buffering: no`, `Connection: close`.',
        content: {
          'text/event-stream': {
            schema: { type: 'string', description: 'Server-Sent Events; the events are described in schemas/asyncapi.json.' },
            example:
              'retry: 2000\n\n: connected to play.example.net\n\nevent: meta\ndata: {"uuid":"faa5dca3-c3d4-354b-ae1b-dde9e5a14b3b","agent":"mymod/1.4.2+0123abc","channel":"play.example.net"}\n\nid: 1\ndata: {"type":"chat","message":"hello"}\n\n',
          },
        },
      },
      ...refusalRefs('GET'),
    },
  };
}

/** The OpenAPI 3.1 document; `version` is the relay's (package.json). */
export function openApiDocument(version: string): JsonObject {
  const schemas = componentSchemas(ALL_COMPONENTS, SCHEMA);
  // Code generators build one class per payload type from this; `type` tells them apart.
  schemas['Payload'] = { ...schemas['Payload']!, discriminator: payloadDiscriminator('openapi', SCHEMA) };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Channel relay: send payloads, open the stream',
      version,
      summary: 'POST payloads to a Minecraft channel relay and open its SSE stream.',
      license: DOCUMENT_LICENSE,
      contact: DOCUMENT_CONTACT,
      description: DESCRIPTION,
    },
    servers: [
      { url: 'https://relay.example.net', description: "Your mesh's one address (GET and POST)." },
      { url: 'http://127.0.0.1:8080', description: 'The development relay of `npm start` (offline identities: `Bearer offline:<name>`).' },
    ],
    tags: [
      { name: 'send', description: 'POST: payloads onto the channel.' },
      { name: 'stream', description: 'GET: the SSE stream (its events: schemas/asyncapi.json).' },
      { name: 'admin', description: "The operator's admin API (`relay serve admin`), on the admin service's own port and never the client address: nodes, channels, streams, keys, bans, replay, live tail, audit. Bearer admin token." },
    ],
    security: SECURITY,
    paths: { ...Object.fromEntries(['/', '/irc'].map((p) => [p, { post: postOperation(p), get: getOperation(p) }])), ...adminPaths() },
    components: {
      schemas: { ...schemas, ...adminComponents() },
      responses: errorResponses(),
      parameters: PARAMETERS,
      headers: HEADERS,
      securitySchemes: { ...SECURITY_SCHEMES, adminToken: ADMIN_SECURITY_SCHEME },
    },
  };
}
