// The no-500 property (issue 9): whatever a client sends, at POST or GET, one real relay answers 2xx
// or 4xx, never 5xx; every 4xx carries a JSON body {error, message}; and afterwards it still answers
// /healthz and delivers a normal POST to a stream. Requests go through undici's request(), which
// sends exactly the header lines given, duplicates included; header values keep to what it accepts
// (tab, space, visible ASCII, bytes 0x80-0xFF).
import fc from 'fast-check';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAYLOAD_TYPES } from '../schemas/payload-types.js';
import type { CreatedKey } from '../services/core/keys.js';
import { Scope } from '../services/core/scopes.js';
import { UUID_A, validPayloads } from './helpers/payloads.js';
import { RelayFixture, type Player } from './helpers/relay.js';

const CH = 'no500.example.net';
/** The relay's default BODY_LIMIT. */
const BODY_LIMIT = 1024 * 1024;
const RUNS = 150;

let relay: RelayFixture;
let key: CreatedKey;
let bridge: CreatedKey;
let sender: Player;

beforeAll(async () => {
  relay = await RelayFixture.start({ env: { RATE_LIMIT_PER_SECOND: '0' } });
  key = await relay.createKey();
  bridge = await relay.createKey([Scope.Unauthenticated, Scope.Establish, Scope.Send, Scope.Receive]);
  sender = relay.player();
});
afterAll(async () => {
  await relay?.close();
});

// ---- sending and judging one request ----

interface Sent {
  method: 'GET' | 'POST';
  /** Path and query, sent as is. */
  target: string;
  headers: Array<[string, string]>;
  body?: string | Uint8Array;
}

interface Answer {
  status: number;
  text: string;
}

async function send(sent: Sent): Promise<Answer> {
  const res = await request(new URL(sent.target, relay.url), {
    method: sent.method,
    headers: sent.headers.flat(),
    ...(sent.body !== undefined ? { body: sent.body } : {}),
  });
  // A stream that opened stays open: its status is all this property needs.
  if (sent.method === 'GET' && res.statusCode === 200) {
    res.body.destroy();
    return { status: 200, text: '' };
  }
  return { status: res.statusCode, text: await res.body.text() };
}

function shown(sent: Sent, answer: Answer): string {
  const body = sent.body === undefined ? '' : typeof sent.body === 'string' ? sent.body : Buffer.from(sent.body).toString('latin1');
  const cut = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n)}... (${s.length} chars)` : s);
  const headers = sent.headers.map(([k, v]) => `${k}: ${JSON.stringify(cut(v, 120))}`).join('; ');
  return `${sent.method} ${cut(sent.target, 200)} [${headers}] body=${JSON.stringify(cut(body, 300))} -> ${answer.status} ${cut(answer.text, 400)}`;
}

/** Sends, then asserts 2xx or 4xx, and a JSON {error, message} body on every 4xx. */
async function judge(sent: Sent): Promise<void> {
  const answer = await send(sent);
  const what = shown(sent, answer);
  expect((answer.status >= 200 && answer.status < 300) || (answer.status >= 400 && answer.status < 500), what).toBe(true);
  if (answer.status >= 400) {
    let body: unknown = null;
    try {
      body = JSON.parse(answer.text);
    } catch {
      // Not JSON: the assertion below names it.
    }
    const ok = typeof body === 'object' && body !== null && typeof (body as Record<string, unknown>)['error'] === 'string' && typeof (body as Record<string, unknown>)['message'] === 'string';
    expect(ok, `4xx without a JSON {error, message} body: ${what}`).toBe(true);
  }
}

type As = 'player' | 'bridge';
const as = fc.constantFrom<As>('player', 'bridge');

/** The headers a correct client sends, for the property's own player or its bridge key. */
function credentials(who: As): Array<[string, string]> {
  const h = who === 'player' ? relay.headers(sender, key, CH) : relay.headers(null, bridge, CH);
  return [...Object.entries(h), ['content-type', 'application/json']];
}

const post = (who: As, body: string | Uint8Array): Promise<void> => judge({ method: 'POST', target: '/', headers: credentials(who), body });

// ---- raw JSON text: what JSON.stringify cannot produce ----

const MARK = '__RAW_MARK__';
/** JSON text of `value`, with the first marker string replaced by `raw`. */
function withRaw(value: unknown, raw: string): string {
  return JSON.stringify(value).replace(JSON.stringify(MARK), () => raw);
}

const numberLiteral = fc.constantFrom('1e400', '-1e400', '1e309', '-1e999999', '1e-400', '-0', '123456789012345678901234567890123456789', '9007199254740993', '0.1e-330', '5e-324', '1.7976931348623157e308');

/** Nesting `depth` deep of arrays, objects or both, around `leaf`. */
function nestedText(depth: number, kind: 'array' | 'object' | 'mixed', leaf: string): string {
  if (kind === 'array') return '['.repeat(depth) + leaf + ']'.repeat(depth);
  if (kind === 'object') return '{"a":'.repeat(depth) + leaf + '}'.repeat(depth);
  const half = Math.floor(depth / 2);
  return '[{"a":'.repeat(half) + leaf + '}]'.repeat(half);
}
const depth = fc.oneof(fc.integer({ min: 1, max: 80 }), fc.integer({ min: 1000, max: 120_000 }));
const deepText = fc.tuple(depth, fc.constantFrom<'array' | 'object' | 'mixed'>('array', 'object', 'mixed'), fc.oneof(numberLiteral, fc.constant('"x"'), fc.constant('null')));

/** A string member that fills the body to `size` bytes of JSON text around it. */
function filling(value: unknown, size: number): string {
  const shell = withRaw(value, '""');
  const room = Math.max(0, size - Buffer.byteLength(shell));
  return withRaw(value, JSON.stringify('x'.repeat(room)));
}
// Near the body limit (and a little past it), where an entry plus its NATS headers may outgrow
// NATS's max_payload (1 MiB by default) while the body itself is within the limit.
const bodySize = fc.oneof(
  fc.integer({ min: 30_000, max: 200_000 }),
  fc.integer({ min: BODY_LIMIT - 256, max: BODY_LIMIT }),
  fc.constant(BODY_LIMIT + 1),
);

const anyString = fc.oneof(
  fc.string({ maxLength: 64 }),
  fc.string({ unit: 'binary', maxLength: 64 }),
  fc.string({ unit: 'grapheme', maxLength: 32 }),
  fc.string({ unit: fc.constantFrom('\u0000', '\r', '\n', '\t', '\u001b', '\u007f', '\u2028', '\ud800', '\udfff', 'a', ' '), maxLength: 16 }),
);

// Shapes a payload might take, valid or not, with the marker somewhere to put raw text.
const payloadShaped = fc.record({
  type: fc.oneof(fc.constantFrom(...PAYLOAD_TYPES, 'teleport', ''), fc.jsonValue({ maxDepth: 2 })),
  message: fc.oneof(anyString, fc.jsonValue({ maxDepth: 3 }), fc.constant(MARK)),
  gamedata: fc.oneof(fc.jsonValue({ maxDepth: 4 }), fc.constant(MARK)),
  game: anyString,
  player: fc.oneof(fc.constant({ uuid: UUID_A, name: 'Steve' }), fc.jsonValue({ maxDepth: 2 })),
  to: fc.oneof(fc.constant(UUID_A), anyString),
});

// Otherwise valid payloads whose free-form member (gamedata, nbt, a chat component), bare or in an
// envelope, holds what JSON.stringify cannot give: a huge number or deep nesting.
const freeForm = fc.constantFrom<unknown>(
  { type: 'minigame', game: 'g', gamedata: MARK },
  { type: 'minigame', game: 'g', gamedata: { teams: [{ score: MARK }] } },
  { type: 'presence', inventory: [{ slot: 0, item: { id: 'minecraft:stone', count: 1, nbt: { data: MARK } } }], attributes: { absorption: 0, health: 20, hunger: 20, oxygen: 300, saturation: 5 } },
  { type: 'chat', message: { text: 'hi', extra: [MARK] } },
  { type: 'message', to: UUID_A, message: ['a', MARK] },
  [{ user: UUID_A, agent: 'bridge/1', host: CH, message: { type: 'minigame', game: 'g', gamedata: MARK } }],
);

const jsonText: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.tuple(freeForm, fc.oneof(numberLiteral, deepText.map(([d, k, l]) => nestedText(d, k, l)))).map(([v, raw]) => withRaw(v, raw)),
  },
  fc.jsonValue({ maxDepth: 6 }).map((v) => JSON.stringify(v)),
  fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 300 }).map((v) => JSON.stringify(v)),
  fc.array(payloadShaped, { minLength: 1, maxLength: 4 }).chain((batch) =>
    fc.oneof(numberLiteral, deepText.map(([d, k, l]) => nestedText(d, k, l))).map((raw) => withRaw(batch, raw)),
  ),
  deepText.map(([d, k, l]) => nestedText(d, k, l)),
  numberLiteral,
  { weight: 2, arbitrary: fc.tuple(fc.jsonValue({ maxDepth: 2 }), bodySize).map(([v, size]) => filling({ type: 'minigame', game: 'g', gamedata: MARK, v }, size)) },
  anyString.map((s) => JSON.stringify({ type: 'chat', message: s })),
);

// ---- mutated valid batches ----

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
const valid = validPayloads() as Record<string, Json>;

const entry: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom(...Object.values(valid)),
  fc.record({
    user: fc.constant(UUID_A),
    agent: fc.constant('bridge/1'),
    host: fc.constant(CH),
    message: fc.constantFrom(...Object.values(valid)),
  }) as fc.Arbitrary<Json>,
);

type MutationKind = 'delete' | 'wrong type' | 'extra field' | 'non-finite' | 'deep' | 'control characters' | 'unicode' | 'long string';
interface Mutation {
  kind: MutationKind;
  at: number;
  value: Json;
  text: string;
  raw: string;
  size: number;
}
const mutation: fc.Arbitrary<Mutation> = fc.record({
  kind: fc.constantFrom<MutationKind>('delete', 'wrong type', 'extra field', 'non-finite', 'deep', 'control characters', 'unicode', 'long string'),
  at: fc.nat(),
  value: fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>,
  text: anyString,
  raw: fc.oneof(numberLiteral, deepText.map(([d, k, l]) => nestedText(d, k, l))),
  size: bodySize,
});

/** Every place in `root` a mutation can land: [container, key] pairs. */
function places(root: Json): Array<[Json[] | { [k: string]: Json }, string | number]> {
  const out: Array<[Json[] | { [k: string]: Json }, string | number]> = [];
  const stack: Json[] = [root];
  while (stack.length > 0) {
    const v = stack.pop()!;
    if (Array.isArray(v)) {
      v.forEach((x, i) => {
        out.push([v, i]);
        stack.push(x);
      });
    } else if (typeof v === 'object' && v !== null) {
      for (const [k, x] of Object.entries(v)) {
        out.push([v, k]);
        stack.push(x);
      }
    }
  }
  return out;
}

/** Applies the mutations in turn; returns the JSON text to send (raw text for the marker kinds). */
function mutate(batch: Json[], muts: Mutation[]): string {
  const root = structuredClone(batch);
  let raw: { text: string; size: number } | null = null;
  for (const m of muts) {
    const spots = places(root);
    if (spots.length === 0) break;
    const [container, k] = spots[m.at % spots.length]!;
    const put = (v: Json): void => {
      if (Array.isArray(container)) container[k as number] = v;
      else container[k as string] = v;
    };
    switch (m.kind) {
      case 'delete':
        if (Array.isArray(container)) container.splice(k as number, 1);
        else delete container[k as string];
        break;
      case 'wrong type':
        put(m.value);
        break;
      case 'extra field':
        if (!Array.isArray(container)) container[`x_${m.text}`] = m.value;
        else container.push(m.value);
        break;
      case 'control characters':
        put(`${m.text}\r\n\u0000\u001b\u007f${m.text}`);
        break;
      case 'unicode':
        put(m.text);
        break;
      case 'non-finite':
      case 'deep':
        if (raw === null) {
          put(MARK);
          raw = { text: m.raw, size: 0 };
        }
        break;
      case 'long string':
        if (raw === null) {
          put(MARK);
          raw = { text: '', size: m.size };
        }
        break;
    }
  }
  if (raw === null) return JSON.stringify(root);
  const r: { text: string; size: number } = raw;
  return r.size > 0 ? filling(root, r.size) : withRaw(root, r.text);
}

// ---- random header values ----

// What an HTTP client can put in a header value: tab, visible ASCII, space and obs-text bytes.
const headerChar = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) },
  { weight: 1, arbitrary: fc.constantFrom('\t', '\u0080', '\u00a0', '\u00e9', '\u00ff') },
);
const headerValue = fc.oneof(
  fc.string({ unit: headerChar, maxLength: 200 }),
  fc.constantFrom('', ' ', ',', 'a, b', '0', '-1', '1e400', '99999999999999999999', '18446744073709551616', '5abc', ' 7 ', 'null', '[]', '{}', '%00', '\u00ff\u00fe'),
);
// What may stand in a request target unencoded, '%' included to make broken escapes.
const queryChar = fc.constantFrom(...'abcXYZ019-._~!$&\'()*+,;=:@/?%'.split(''));
const hostQuery = fc.oneof(
  headerValue.map((v) => `?host=${encodeURIComponent(v)}`),
  fc.tuple(headerValue, headerValue).map(([a, b]) => `?host=${encodeURIComponent(a)}&host=${encodeURIComponent(b)}`),
  fc.constant(`?host=${CH}&host=other.example.net`),
  fc.string({ unit: queryChar, maxLength: 40 }).map((q) => `?${q}`),
  fc.constant(''),
);

// Stands for the correct value of a header (known only at run time); no client can send a NUL.
const RIGHT = '\u0000right';
type HeaderLines = Array<[string, string]>;

/**
 * A header left out, sent right, sent with a random value, or sent twice (right and/or random).
 * Mostly right, so that a fair share of runs get past authentication to what lies behind it.
 */
function variant(name: string): fc.Arbitrary<HeaderLines> {
  return fc.oneof(
    fc.constant<HeaderLines>([]),
    { weight: 8, arbitrary: fc.constant<HeaderLines>([[name, RIGHT]]) },
    headerValue.map((v): HeaderLines => [[name, v]]),
    fc.constant<HeaderLines>([[name, RIGHT], [name, RIGHT]]),
    headerValue.map((v): HeaderLines => [[name, RIGHT], [name, v]]),
    headerValue.map((v): HeaderLines => [[name, v], [name, RIGHT]]),
    fc.tuple(headerValue, headerValue).map(([a, b]): HeaderLines => [[name, a], [name, b]]),
  );
}

const headerPlan = fc.record({
  method: fc.constantFrom<'GET' | 'POST'>('GET', 'POST'),
  target: fc.tuple(fc.constantFrom('/', '/irc'), hostQuery).map(([path, query]) => path + query),
  bridgeKey: fc.boolean(),
  authorization: fc.oneof(
    fc.constant<HeaderLines>([]),
    { weight: 4, arbitrary: fc.constant<HeaderLines>([['authorization', RIGHT]]) },
    headerValue.map((v): HeaderLines => [['authorization', v]]),
    headerValue.map((v): HeaderLines => [['authorization', `Bearer ${v}`]]),
    headerValue.map((v): HeaderLines => [['authorization', RIGHT], ['authorization', `Bearer ${v}`]]),
  ),
  clientId: variant('client-id'),
  clientSecret: variant('client-secret'),
  // The other spellings of the credentials (spec 5.1), alongside or instead of the plain ones.
  otherSpellings: fc.subarray(['x-', 'service-', 'x-service-']).chain((prefixes) =>
    fc.tuple(...prefixes.map((p) => fc.tuple(variant(`${p}client-id`), variant(`${p}client-secret`)))).map((pairs) => pairs.flat(2)),
  ),
  server: variant('x-irc-multiplayer-server'),
  userAgent: variant('user-agent'),
  lastEventId: variant('last-event-id'),
  idempotencyKey: variant('idempotency-key'),
});

describe('no input gets a 5xx', () => {
  // Guards the body parser and everything after it against arbitrary bytes labelled as JSON.
  it('(a) random bytes as a JSON POST body are answered 2xx or 4xx with a JSON error', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 4096 }), as, (bytes, who) => post(who, bytes)),
      { numRuns: RUNS },
    );
  });

  // Guards validation against any JSON value: deep, huge numbers, long strings, odd unicode.
  it('(b) random JSON values, deep shapes, huge numbers and long strings are answered 2xx or 4xx', async () => {
    await fc.assert(
      fc.asyncProperty(jsonText, as, (text, who) => post(who, text)),
      { numRuns: RUNS },
    );
  });

  // Guards everything past validation: valid batches broken one field at a time, for both kinds of key.
  it('(c) mutated valid batches of payloads and envelopes are answered 2xx or 4xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(entry, { minLength: 1, maxLength: 4 }), fc.array(mutation, { minLength: 1, maxLength: 3 }), as, (batch, muts, who) =>
        post(who, mutate(batch, muts)),
      ),
      { numRuns: RUNS },
    );
  });

  // Guards authentication, channel choice, resume and idempotency against any header a client can send.
  it('(d) random header values and repeated ?host= at GET and POST are answered 2xx or 4xx', async () => {
    await fc.assert(
      fc.asyncProperty(headerPlan, async (plan) => {
        // A fresh account each run: a wrong credential bans it, which must not leak into other runs.
        const player = relay.player();
        const k = plan.bridgeKey ? bridge : key;
        const right: Record<string, string> = {
          authorization: `Bearer ${player.token}`,
          ...Object.fromEntries(['', 'x-', 'service-', 'x-service-'].flatMap((p) => [[`${p}client-id`, k.clientId], [`${p}client-secret`, k.clientSecret]])),
          'x-irc-multiplayer-server': CH,
          'user-agent': 'testmod/1.0.0+0123456789abcdef',
          'last-event-id': '1',
          'idempotency-key': `key-${player.name}`,
        };
        const lines = (l: HeaderLines): HeaderLines => l.map(([n, v]): [string, string] => [n, v === RIGHT ? right[n]! : v]);
        const headers = [plan.authorization, plan.clientId, plan.clientSecret, plan.otherSpellings, plan.server, plan.userAgent].flatMap(lines);
        if (plan.method === 'GET') {
          await judge({ method: 'GET', target: plan.target, headers: [...headers, ['accept', 'text/event-stream'], ...lines(plan.lastEventId)] });
        } else {
          const body = JSON.stringify({ type: 'chat', message: 'hi' });
          await judge({ method: 'POST', target: plan.target, headers: [...headers, ['content-type', 'application/json'], ...lines(plan.idempotencyKey)], body });
        }
      }),
      { numRuns: RUNS },
    );
  });
});

describe('after all that', () => {
  // Guards against a hostile input leaving the relay broken for everyone else.
  it('the relay still answers /healthz and delivers a normal POST to a stream', async () => {
    const health = await fetch(new URL('/healthz', relay.url));
    expect(health.status).toBe(200);
    const ch = 'after.example.net';
    const listener = await relay.connect(relay.headers(relay.player(), key, ch));
    const res = await relay.post({ type: 'chat', message: 'still here' }, relay.headers(relay.player(), key, ch));
    expect(res.status).toBe(200);
    expect((await listener.nextPair()).data).toEqual({ type: 'chat', message: 'still here' });
  });
});
