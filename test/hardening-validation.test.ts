// Hostile and careless clients (issue 9, validation part): numbers JSON cannot carry, nesting deep
// enough to break a serializer, and envelope agents that would break the NATS header built from
// them. Each is refused with 400 invalid_payload naming the JSON path, and nothing of the batch is
// published: a sentinel posted afterwards is the next pair the listening stream reads.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ajv } from '../schemas/ajv.js';
import { ENTRY_MAX_DEPTH } from '../schemas/common.js';
import { LoginPayload, PingPayload } from '../schemas/payloads.js';
import type { CreatedKey } from '../services/core/keys.js';
import { Scope } from '../services/core/scopes.js';
import { ITEM, POSITION, UUID_A, validPayloads } from './helpers/payloads.js';
import { RelayFixture, type Player, type PostResult } from './helpers/relay.js';
import type { SseStream } from './helpers/sse-client.js';

const CH = 'hardening.example.net';
let relay: RelayFixture;
let key: CreatedKey;
let bridge: CreatedKey;
let sender: Player;
let stream: SseStream;

beforeAll(async () => {
  relay = await RelayFixture.start({ env: { RATE_LIMIT_PER_SECOND: '0' } });
  key = await relay.createKey();
  bridge = await relay.createKey([Scope.Unauthenticated, Scope.Establish, Scope.Send, Scope.Receive]);
  sender = relay.player();
  stream = await relay.connect(relay.headers(relay.player(), key, CH));
});
afterAll(async () => {
  await relay?.close();
});

type P = Record<string, unknown>;
const base = validPayloads();
const INF = '"__NUMBER__"';

/** JSON text of `value` with every INF marker replaced by `number` (1e400 parses to Infinity). */
function raw(value: unknown, number = '1e400'): string {
  return JSON.stringify(value).split(INF).join(number);
}
const marker = JSON.parse(INF) as string;

/** `levels` arrays nested in one another, innermost holding `leaf`, as JSON text. */
const nestedArrays = (levels: number, leaf = '1'): string => '['.repeat(levels) + leaf + ']'.repeat(levels);

const postAsPlayer = (body: unknown): Promise<PostResult> => relay.post(body, relay.headers(sender, key, CH));
const postAsBridge = (body: unknown): Promise<PostResult> => relay.post(body, relay.headers(null, bridge, CH));

interface Detail {
  entry: number;
  path: string;
  reason: string;
}

/** A 400 invalid_payload with a detail for `entry` at `path` (or matching it), and nothing published. */
async function expectRefused(res: PostResult, entry: number, path: string | RegExp): Promise<Detail> {
  expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(400);
  expect(res.body['error']).toBe('invalid_payload');
  const details = res.body['details'] as Detail[];
  const hit = details.find((d) => d.entry === entry && (typeof path === 'string' ? d.path === path : path.test(d.path)));
  expect(hit, JSON.stringify(details).slice(0, 500)).toBeDefined();
  await expectNothingPublished();
  return hit!;
}

async function expectNothingPublished(): Promise<void> {
  const tag = `sentinel ${Math.random()}`;
  expect((await postAsPlayer({ type: 'chat', message: tag })).status).toBe(200);
  const seen = await stream.pairsUntil((p) => p.data['message'] === tag);
  expect(seen.map((p) => p.data['message'] ?? p.data.type)).toEqual([tag]);
}

describe('numbers JSON cannot carry (1e400 parses to Infinity)', () => {
  const numberFields: Array<[string, P, string]> = [
    ['a ping y', { ...base['ping']!, position: { ...POSITION, y: marker } }, '/position/y'],
    ['a logout yaw', { ...base['logout']!, position: { ...POSITION, phase: 'standing', pitch: 0, yaw: marker } }, '/position/yaw'],
    ['a presence health', { ...base['presence']!, attributes: { absorption: 0, health: marker, hunger: 20, oxygen: 300, saturation: 5 } }, '/attributes/health'],
    ['a login timestamp', { ...base['login']!, timestamp: marker }, '/timestamp'],
    ['a ping duration', { ...base['ping']!, duration: marker }, '/duration'],
    ['an enchantment level', { ...base['presence']!, inventory: [{ slot: 0, item: { ...ITEM, enchantments: [{ id: 'minecraft:sharpness', level: marker }] } }] }, '/inventory/0/item/enchantments/0/level'],
  ];

  // Guards against every client receiving null in a required numeric field (JSON.stringify(Infinity)).
  it.each(numberFields)('%s of 1e400 is refused naming its path, never delivered as null', async (_name, payload, path) => {
    await expectRefused(await postAsPlayer(raw([base['chat'], payload])), 1, path);
  });

  // Guards the free-form member gamedata, which no schema types: -1e400 deep inside it is refused too.
  it('a non-finite number anywhere inside minigame gamedata is refused naming its path', async () => {
    const payload = { ...base['minigame']!, gamedata: { teams: [{ name: 'red', score: marker }] } };
    const hit = await expectRefused(await postAsPlayer(raw(payload, '-1e400')), 0, '/gamedata/teams/0/score');
    expect(hit.reason).toMatch(/finite/);
  });

  // Guards item nbt, free-form component data relayed as is.
  it('a non-finite number inside an item nbt is refused naming its path', async () => {
    const payload = { ...base['logout']!, inventory: [{ slot: 3, item: { ...ITEM, nbt: { 'minecraft:custom_data': { weight: marker } } } }] };
    await expectRefused(await postAsPlayer(raw(payload)), 0, '/inventory/0/item/nbt/minecraft:custom_data/weight');
  });

  // Guards chat components, which are objects or arrays of anything.
  it('a non-finite number inside a chat component object or array is refused naming its path', async () => {
    await expectRefused(await postAsPlayer(raw({ type: 'chat', message: { text: 'hi', extra: [{ text: '!', size: marker }] } })), 0, '/message/extra/0/size');
    await expectRefused(await postAsPlayer(raw({ type: 'message', to: UUID_A, message: ['a', marker] })), 0, '/message/1');
  });

  // Guards ajv's own number checks behind the walk: `strict: false` had turned strictNumbers off.
  it('the payload schemas themselves refuse Infinity as a number or an integer', () => {
    expect(ajv.validate(PingPayload, { ...base['ping']!, duration: Infinity })).toBe(false);
    expect(ajv.validate(LoginPayload, { ...base['login']!, timestamp: -Infinity })).toBe(false);
  });

  // Guards the payload a bridge wraps in an envelope: validated exactly as if sent bare.
  it('a non-finite number inside an enveloped payload is refused naming its path inside the envelope', async () => {
    const envelope = { user: UUID_A, agent: 'bridge/1', message: { ...base['minigame']!, gamedata: [marker] } };
    await expectRefused(await postAsBridge(raw([{ user: UUID_A, agent: 'bridge/1', message: base['chat'] }, envelope])), 1, '/message/gamedata/0');
  });
});

describe('deep nesting', () => {
  // Guards the documented bound itself: a payload exactly at it is relayed intact, one level more is not.
  it(`gamedata within ${ENTRY_MAX_DEPTH} levels for the whole payload is delivered; one level deeper is refused naming the path`, async () => {
    // The payload object is level 1, so gamedata may hold ENTRY_MAX_DEPTH - 1 nested containers.
    const within = `{"type":"minigame","game":"deep","gamedata":${nestedArrays(ENTRY_MAX_DEPTH - 1)}}`;
    expect((await postAsPlayer(within)).status).toBe(200);
    expect((await stream.nextPair()).data).toEqual(JSON.parse(within));
    const beyond = `{"type":"minigame","game":"deep","gamedata":${nestedArrays(ENTRY_MAX_DEPTH)}}`;
    const hit = await expectRefused(await postAsPlayer(beyond), 0, `/gamedata${'/0'.repeat(ENTRY_MAX_DEPTH - 1)}`);
    expect(hit.reason).toMatch(new RegExp(`deeper than ${ENTRY_MAX_DEPTH} levels`));
  });

  // Guards against relaying a payload that receivers' JSON parsers choke on (it was relayed at a few thousand).
  it('gamedata nested 3,000 levels is refused, not relayed', async () => {
    await expectRefused(await postAsPlayer(`{"type":"minigame","game":"deep","gamedata":${nestedArrays(3000)}}`), 0, /^\/gamedata(\/0)+$/);
  });

  // Guards against the 500 from JSON.stringify's stack overflow at 10,000 levels.
  it('gamedata nested 10,000 levels is a 400 naming the path, not a 500', async () => {
    const hit = await expectRefused(await postAsPlayer(`{"type":"minigame","game":"deep","gamedata":${nestedArrays(10_000)}}`), 0, /^\/gamedata(\/0)+$/);
    // The walk stops at the bound: the path names the first container past it, not the innermost.
    expect(hit.path.split('/').length).toBeLessThanOrEqual(ENTRY_MAX_DEPTH + 1);
  });

  // Guards the check itself against overflowing the stack: 100,000 levels of nbt objects.
  it('an item nbt nested 100,000 levels is a 400 naming the path, and the relay keeps serving', async () => {
    const nbt = '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000);
    const body = `{"type":"presence","inventory":[{"slot":0,"item":{"id":"minecraft:stone","count":1,"nbt":${nbt}}}],"attributes":{"absorption":0,"health":20,"hunger":20,"oxygen":300,"saturation":5}}`;
    await expectRefused(await postAsPlayer(body), 0, /^\/inventory\/0\/item\/nbt(\/a)+$/);
  });

  // Guards the unknown-type message, which quoted the type with JSON.stringify: a deep `type` was a 500.
  it('a payload whose type is an array nested 10,000 levels is a 400, not a 500', async () => {
    await expectRefused(await postAsPlayer(`{"type":${nestedArrays(10_000, '"chat"')},"message":"hi"}`), 0, /^\/type(\/0)+$/);
  });

  // Guards bridges: an enveloped payload is bounded exactly as if sent bare.
  it('gamedata nested 10,000 levels inside a bridge envelope is a 400 naming the path, not a 500', async () => {
    const body = `[{"user":"${UUID_A}","agent":"bridge/1","message":{"type":"minigame","game":"deep","gamedata":${nestedArrays(10_000)}}}]`;
    await expectRefused(await postAsBridge(body), 0, /^\/message\/gamedata(\/0)+$/);
  });
});

describe('envelope agents', () => {
  // Guards the NATS header built from the agent: CR/LF made the ingress answer 500 after earlier entries were stored.
  it('an envelope agent with CR/LF is refused naming /agent, and no entry of the batch is published', async () => {
    const batch = [
      { user: UUID_A, agent: 'bridge/1', message: { type: 'chat', message: 'first, valid' } },
      { user: UUID_A, agent: 'bridge/1\r\nRelay-Sender: 00000000-0000-0000-0000-000000000000', message: { type: 'chat', message: 'second' } },
    ];
    const hit = await expectRefused(await postAsBridge(batch), 1, '/agent');
    expect(hit.reason).toBe('must be text without control, line-separator or bidi-control characters or lone surrogates');
    // Only what the text rule names is refused: spaces and any other Unicode text still go through.
    const clean = { ...batch[1]!, agent: 'Brücke 1.0 ✓ (discord)' };
    expect((await postAsBridge([clean])).status).toBe(200);
    expect((await stream.nextPair()).meta.agent).toBe('Brücke 1.0 ✓ (discord)');
  });

  // Guards every other control character (C0 and DEL), in either spelling of the member.
  it.each([
    ['agent', 'a NUL', 'bridge\u0000/1'],
    ['agent', 'a tab', 'bridge\t/1'],
    ['userAgent', 'an escape', 'bridge\u001b[31m/1'],
    ['userAgent', 'a DEL', 'bridge/1\u007f'],
  ])('an envelope %s with %s is refused naming its path', async (member, _what, agent) => {
    await expectRefused(await postAsBridge([{ user: UUID_A, [member]: agent, message: base['chat'] }]), 0, `/${member}`);
  });
});
