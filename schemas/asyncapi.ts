// The AsyncAPI 3.0 description of the stream (GET / and /irc): its events, the ready event, the
// meta/data pairing, the server keepalive pair, the close event with every reason of the catalogue,
// id/Last-Event-ID resume and retry:. Built as a plain object from the TypeBox schemas and schemas/close.ts, so the
// stream has one source of truth; `npm run schemas` writes it to schemas/asyncapi.json. The HTTP
// handshake (headers, refusals) is also in the OpenAPI document, which can say more about HTTP.

import { EVENT_ID_NOTE, EVENT_ID_PATTERN, MAX_EVENT_ID_LENGTH } from './event-id.js';
import { CLOSE_REASON_CODES, CLOSE_REASONS, type CloseReasonEntry } from './close.js';
import { closeReasonList, STREAM_DESCRIPTION } from './asyncapi-description.js';
import { STREAM_TIMINGS } from './stream-timings.js';
import { componentSchemas, DOCUMENT_CONTACT, DOCUMENT_LICENSE, payloadDiscriminator, STREAM_COMPONENTS, type JsonObject } from './api-components.js';
import { USER_AGENT_RULE } from './text.js';
import { NIL_UUID } from './uuid.js';

const SCHEMA = '#/components/schemas/';
const ref = (name: string): JsonObject => ({ $ref: `${SCHEMA}${name}` });

export { STREAM_TIMINGS };

const SSE_HEADERS_NOTE = 'The SSE fields of this event (not HTTP headers).';

/** The SSE fields of a `meta` event (delivered pairs and server keepalives alike). */
const metaEventHeaders = {
  type: 'object',
  description: SSE_HEADERS_NOTE,
  properties: { event: { const: 'meta', type: 'string' } },
  required: ['event'],
};

function messages(version: string): Record<string, JsonObject> {
  return {
    meta: {
      name: 'meta',
      title: 'meta event',
      summary: 'Who sent the payload that comes next, and on which channel.',
      description:
        'SSE `event: meta`. Always immediately followed by the unnamed data event it describes: pair each `meta` with the next unnamed data event. It carries no `id:`.',
      contentType: 'application/json',
      headers: metaEventHeaders,
      payload: ref('MetaFrame'),
      examples: [
        {
          name: 'player',
          headers: { event: 'meta' },
          payload: { uuid: 'faa5dca3-c3d4-354b-ae1b-dde9e5a14b3b', agent: 'mymod/1.4.2+0123456789abcdef0123456789abcdef01234567', channel: 'play.example.net' },
        },
      ],
    },
    payload: {
      name: 'payload',
      title: 'data event (unnamed)',
      summary: 'A payload, one of the eleven types, right after its meta event.',
      description:
        'SSE event with no `event:` field (a plain `message` event to EventSource), `data:` the payload JSON and `id:` where the stream is in the log. Keep the last `id:` for Last-Event-ID. Its sender is in the `meta` event just before it.',
      contentType: 'application/json',
      headers: {
        type: 'object',
        description: SSE_HEADERS_NOTE,
        properties: {
          id: { type: 'string', pattern: EVENT_ID_PATTERN, maxLength: MAX_EVENT_ID_LENGTH, description: EVENT_ID_NOTE },
        },
        required: ['id'],
      },
      payload: ref('Payload'),
      examples: [{ name: 'chat', headers: { id: '1' }, payload: { type: 'chat', message: 'hello' } }],
    },
    keepaliveMeta: {
      name: 'meta',
      title: 'server keepalive: meta event',
      summary: `First half of the server keepalive pair, every ${STREAM_TIMINGS.keepaliveMs / 1000} s.`,
      description: `SSE \`event: meta\` whose \`uuid\` is the nil UUID (${NIL_UUID}) and \`agent\` the relay's own (\`channel-relay/<version>\`); followed by the keepalive data event. Not in the log.`,
      contentType: 'application/json',
      headers: metaEventHeaders,
      payload: ref('MetaFrame'),
      examples: [{ name: 'keepalive', headers: { event: 'meta' }, payload: { uuid: NIL_UUID, agent: `channel-relay/${version}`, channel: 'play.example.net' } }],
    },
    keepalive: {
      name: 'keepalive',
      title: 'server keepalive: data event (unnamed)',
      summary: 'Second half of the server keepalive pair: {"type":"keepalive"}, with no id:.',
      description: 'SSE event with no `event:` and no `id:` (it is not in the log, and does not move Last-Event-ID). Any byte resets the client watchdog.',
      contentType: 'application/json',
      payload: ref('KeepalivePayload'),
      examples: [{ name: 'keepalive', payload: { type: 'keepalive' } }],
    },
    ready: {
      name: 'ready',
      title: 'ready event',
      summary: 'The relay has subscribed the stream: nothing published from here on is missed.',
      description:
        'SSE `event: ready`, sent once, after the `retry:` field and before any frame (on a resume, before the frames it missed); an SSE comment `: connected to <channel>` follows it for people. Clients that listen only to `meta` and unnamed events never see it.',
      contentType: 'application/json',
      headers: {
        type: 'object',
        description: SSE_HEADERS_NOTE,
        properties: { event: { const: 'ready', type: 'string' } },
        required: ['event'],
      },
      payload: ref('ReadyEvent'),
      examples: [
        { name: 'fresh', headers: { event: 'ready' }, payload: { channel: 'play.example.net', resumedAfter: null, retryMs: STREAM_TIMINGS.openRetryMs } },
        { name: 'resumed', headers: { event: 'ready' }, payload: { channel: 'play.example.net', resumedAfter: 41, retryMs: STREAM_TIMINGS.openRetryMs } },
      ],
    },
    close: {
      name: 'close',
      title: 'close event',
      summary: 'Why the relay is ending the stream, and whether to come back.',
      description: `SSE \`event: close\`, sent just before the relay ends the stream; an SSE comment with the same sentence follows it, and when the advice is to reconnect a \`retry: <retryAfterMs>\` field precedes it. Reasons (schemas/close.ts):\n\n${closeReasonList()}`,
      contentType: 'application/json',
      headers: {
        type: 'object',
        description: SSE_HEADERS_NOTE,
        properties: { event: { const: 'close', type: 'string' } },
        required: ['event'],
      },
      payload: ref('CloseEvent'),
      examples: CLOSE_REASON_CODES.map((code) => {
        const entry: CloseReasonEntry = CLOSE_REASONS[code];
        const payload: JsonObject = { reason: code, message: entry.message, reconnect: entry.reconnect };
        if (entry.retryAfterMs !== undefined) payload['retryAfterMs'] = entry.retryAfterMs;
        return { name: code, headers: { event: 'close' }, payload };
      }),
    },
  };
}

/** The request's headers (spec 5.1). AsyncAPI's HTTP binding has no place for them, hence x-. */
const REQUEST_HEADERS: JsonObject = {
  type: 'object',
  properties: {
    Accept: { const: 'text/event-stream', type: 'string' },
    Authorization: { type: 'string', pattern: '^Bearer .+', description: "Bearer <game access token>; bridges send none." },
    'Client-ID': { type: 'string', description: 'Also accepted as X-Client-ID, Service-Client-ID, X-Service-Client-ID, or an operator-configured prefix.' },
    'Client-Secret': { type: 'string', description: 'Also accepted with the same prefixes. Missing or wrong with a valid session: the account is banned (spec A3).' },
    'User-Agent': { type: 'string', description: `<mod_id>/<mod_version>+<git_commit_full_hash>; it becomes the agent of the stream's claim, and of what the client sends. ${USER_AGENT_RULE}` },
    'X-IRC-Multiplayer-Server': { type: 'string', description: 'The multiplayer server (the channel); the query `host` wins over it.' },
    'Last-Event-ID': { type: 'string', pattern: EVENT_ID_PATTERN, maxLength: MAX_EVENT_ID_LENGTH, description: 'The last id: of the previous stream, exactly as sent; send it on every reconnect.' },
  },
  required: ['Accept', 'Client-ID', 'Client-Secret', 'User-Agent'],
};

const QUERY: JsonObject = {
  type: 'object',
  properties: {
    host: { type: 'string', minLength: 1, maxLength: 253, description: 'The multiplayer server (the channel); wins over X-IRC-Multiplayer-Server.' },
  },
};

/**
 * Not an SSE event: the JSON body of the HTTP response when the relay refuses to open the stream
 * (every refusal of GET, listed in the OpenAPI document), the same shape as POST's refusals. Here so
 * that models generated from this document alone can read it.
 */
const REFUSAL: JsonObject = {
  name: 'refusal',
  title: 'refusal (HTTP response body, not an event)',
  summary: 'The JSON body of a refused GET (status 400 and above, before any event); POST refusals have the same shape.',
  description: 'Sent instead of the stream, with `Content-Type: application/json`; its codes and statuses are in schemas/openapi.json.',
  contentType: 'application/json',
  payload: ref('ErrorBody'),
  examples: [{ name: 'unauthorized', payload: { error: 'unauthorized', message: 'the game session could not be verified' } }],
};

const MESSAGE_NAMES = ['ready', 'meta', 'payload', 'keepaliveMeta', 'keepalive', 'close', 'refusal'] as const;

function channel(address: string): JsonObject {
  return {
    address,
    title: `GET ${address}`,
    description: address === '/' ? 'The stream of one channel (or of every channel, for a bridge).' : 'The same stream as GET /.',
    messages: Object.fromEntries(MESSAGE_NAMES.map((m) => [m, { $ref: `#/components/messages/${m}` }])),
  };
}

function operation(channelId: string, address: string): JsonObject {
  return {
    action: 'receive',
    channel: { $ref: `#/channels/${channelId}` },
    title: `Receive the stream (GET ${address})`,
    summary: `a ready event, then meta + data pairs, server keepalive pairs every ${STREAM_TIMINGS.keepaliveMs / 1000} s, and a close event before the end.`,
    description:
      'Open with GET, the request headers of x-request-headers and optionally the query `host`. The stream is subscribed at `ready`. Pair each `meta` with the next unnamed data event; keep the last `id:` and send it as Last-Event-ID on every reconnect; honour `retry:` and the `close` advice.',
    bindings: { http: { method: 'GET', query: QUERY, bindingVersion: '0.3.0' } },
    'x-request-headers': REQUEST_HEADERS,
    messages: MESSAGE_NAMES.map((m) => ({ $ref: `#/channels/${channelId}/messages/${m}` })),
  };
}

function streamSchemas(): Record<string, JsonObject> {
  const schemas = componentSchemas(STREAM_COMPONENTS, SCHEMA);
  schemas['Payload'] = { ...schemas['Payload']!, discriminator: payloadDiscriminator('asyncapi', SCHEMA) };
  return schemas;
}

/** The AsyncAPI 3.0 document; `version` is the relay's (package.json). */
export function asyncApiDocument(version: string): JsonObject {
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Channel relay: the stream',
      version,
      license: DOCUMENT_LICENSE,
      contact: DOCUMENT_CONTACT,
      description: STREAM_DESCRIPTION,
    },
    defaultContentType: 'application/json',
    servers: {
      production: { host: 'relay.example.net', protocol: 'https', description: "Your mesh's one address (GET and POST)." },
      development: { host: '127.0.0.1:8080', protocol: 'http', description: 'The development relay of `npm start`.' },
    },
    channels: { stream: channel('/'), streamIrc: channel('/irc') },
    operations: { receiveStream: operation('stream', '/'), receiveStreamIrc: operation('streamIrc', '/irc') },
    components: { schemas: streamSchemas(), messages: { ...messages(version), refusal: REFUSAL } },
  };
}
