// The OpenAPI document's request side (openapi.ts): the parameters a client sends (the channel, its
// user agent, Idempotency-Key, Last-Event-ID, the other spellings of its credentials) and how it
// authenticates (the session and the client build's credentials).

import type { JsonObject, JsonValue } from './api-components.js';
import { EVENT_ID_PATTERN, MAX_EVENT_ID_LENGTH } from './event-id.js';
import { USER_AGENT_RULE } from './text.js';

/** The spellings of the client credentials besides Client-ID / Client-Secret (spec 5.1). */
export const CREDENTIAL_PREFIXES = ['X-', 'Service-', 'X-Service-'] as const;

function header(description: string, schema: JsonObject, required = false): JsonObject {
  return { description, required, schema };
}

export const PARAMETERS: Record<string, JsonObject> = {
  host: {
    name: 'host',
    in: 'query',
    required: false,
    description:
      'The multiplayer server (the channel). Wins over X-IRC-Multiplayer-Server when both are given. Normalised: trimmed, lower-cased, trailing dots and ":25565" removed until neither is left.',
    schema: { type: 'string', minLength: 1, maxLength: 253 },
  },
  multiplayerServer: {
    name: 'X-IRC-Multiplayer-Server',
    in: 'header',
    ...header(
      'The multiplayer server the client is on: the SRV-resolved host, named identically by every client on it. Selects the channel unless the query `host` is given. A POST needs one of them unless every entry is an envelope with its own `host`; a stream needs one unless it is a bridge stream hearing every channel.',
      { type: 'string', minLength: 1, maxLength: 253 },
    ),
  },
  userAgent: {
    name: 'User-Agent',
    in: 'header',
    ...header(
      `Required by the specification (A1): \`<mod_id>/<mod_version>+<git_commit_full_hash>\`. It becomes \`agent\` in the meta frame of what this request sends (null when absent; the relay does not refuse a request without it). ${USER_AGENT_RULE}`,
      { type: 'string', examples: ['mymod/1.4.2+0123456789abcdef0123456789abcdef01234567'] },
      true,
    ),
  },
  idempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    ...header(
      'Names this request (IETF draft "The Idempotency-Key HTTP Header Field"). The same key with the same body, within STREAM_DUPLICATE_WINDOW (2 min by default), is answered as the first time and stores nothing twice; another body under a used key is 422 `idempotency_key_reused`. Send a fresh key per batch and resend the same body with the same key after a 503, a 408 or a network error.',
      { type: 'string', pattern: '^[A-Za-z0-9_.:-]{1,128}$' },
    ),
  },
  lastEventId: {
    name: 'Last-Event-ID',
    in: 'header',
    ...header(
      'The last `id:` the previous stream delivered. The relay replays what the stream missed (same filters), then continues live, with no gap and no duplicate; frames older than the log keeps are skipped (an SSE comment says so). Send it on every reconnect.',
      { type: 'string', pattern: EVENT_ID_PATTERN, maxLength: MAX_EVENT_ID_LENGTH },
    ),
  },
  ...Object.fromEntries(
    CREDENTIAL_PREFIXES.flatMap((prefix) =>
      (['ID', 'Secret'] as const).map((part) => [
        `${prefix.replace(/-/g, '')}Client${part}`,
        {
          name: `${prefix}Client-${part}`,
          in: 'header',
          ...header(`Another spelling of Client-${part}, accepted instead of it. Send one client id and one secret: two different values are 400 \`conflicting_credentials\`.`, {
            type: 'string',
          }),
        },
      ]),
    ),
  ),
};

export const paramRef = (name: string): JsonObject => ({ $ref: `#/components/parameters/${name}` });
export const COMMON_PARAMETERS = ['host', 'multiplayerServer', 'userAgent', ...Object.keys(PARAMETERS).filter((k) => /Client(ID|Secret)$/.test(k))];

export const SECURITY_SCHEMES: JsonObject = {
  session: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'game access token',
    description:
      "The player's game access token (the token the game holds after login), checked against the game's profile API. 401 `invalid_session`: refresh it once and retry once. Bridges send none.",
  },
  clientId: {
    type: 'apiKey',
    in: 'header',
    name: 'Client-ID',
    description: `The client build's id, issued with its secret and built into the client. Also accepted as ${CREDENTIAL_PREFIXES.map((p) => `\`${p}Client-ID\``).join(', ')}, or under a prefix the operator configured (CLIENT_HEADER_PREFIXES).`,
  },
  clientSecret: {
    type: 'apiKey',
    in: 'header',
    name: 'Client-Secret',
    description: `The client build's secret. Also accepted as ${CREDENTIAL_PREFIXES.map((p) => `\`${p}Client-Secret\``).join(', ')}, or under a configured prefix. Missing or wrong with a valid session: the account is banned (spec A3).`,
  },
};

/** Players: session and credentials. Bridges (irc.connection.unauthenticated): credentials alone. */
export const SECURITY: JsonValue = [
  { session: [], clientId: [], clientSecret: [] },
  { clientId: [], clientSecret: [] },
];
