// Every field constraint of spec section 2 and DESIGN.md section 3, both sides of each bound, through
// the real HTTP ingress. Valid cases are delivered; invalid ones are refused with 400 and a detail
// naming the entry and the JSON path, and nothing of them is published.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedKey } from '../services/core/keys.js';
import { ITEM, POSITION, UUID_A, validPayloads } from './helpers/payloads.js';
import { RelayFixture, type Player } from './helpers/relay.js';
import type { SseStream } from './helpers/sse-client.js';

let relay: RelayFixture;
let key: CreatedKey;
let sender: Player;
let listener: Player;
let validStream: SseStream;
let invalidStream: SseStream;
const VALID = 'valid.example.net';
const INVALID = 'invalid.example.net';

beforeAll(async () => {
  relay = await RelayFixture.start({ env: { RATE_LIMIT_PER_SECOND: '0' } });
  key = await relay.createKey();
  sender = relay.player();
  listener = relay.player();
  validStream = await relay.connect(relay.headers(listener, key, VALID));
  invalidStream = await relay.connect(relay.headers(relay.player(), key, INVALID));
});
afterAll(async () => {
  await relay?.close();
});

type P = Record<string, unknown>;
const base = validPayloads();
const set = (type: string, path: string[], value: unknown): P => {
  const p = structuredClone(base[type]!);
  let o: Record<string, unknown> = p;
  for (const k of path.slice(0, -1)) o = o[k] as Record<string, unknown>;
  if (value === undefined) delete o[path[path.length - 1]!];
  else o[path[path.length - 1]!] = value;
  return p;
};

// [name, payload, JSON path of the problem (invalid cases)]
const accepted: Array<[string, P]> = [
  ...Object.entries(base).map(([t, p]): [string, P] => [`a plain ${t}`, p]),
  ['x at +30,000,000', set('ping', ['position', 'x'], 30_000_000)],
  ['x at -30,000,000', set('ping', ['position', 'x'], -30_000_000)],
  ['z at +30,000,000', set('death', ['position', 'z'], 30_000_000)],
  ['z at -30,000,000', set('death', ['position', 'z'], -30_000_000)],
  ['y at -64', set('ping', ['position', 'y'], -64)],
  ['y high above the build limit', set('ping', ['position', 'y'], 100_000)],
  ['dimension nether', set('ping', ['position', 'dimension'], 'nether')],
  ['dimension end', set('ping', ['position', 'dimension'], 'end')],
  ['a 3-character name', set('login', ['player', 'name'], 'Abc')],
  ['a 16-character name', set('login', ['player', 'name'], 'Abcdefghijklmn_1')],
  ['pitch -90', set('logout', ['position', 'pitch'], -90)],
  ['pitch 90', set('logout', ['position', 'pitch'], 90)],
  ['any yaw', set('logout', ['position', 'yaw'], -7200.5)],
  ['posture standing', set('logout', ['position', 'phase'], 'standing')],
  ['posture swimming', set('logout', ['position', 'phase'], 'swimming')],
  ['inventory slot 0', set('presence', ['inventory'], [{ slot: 0, item: { id: 'minecraft:stone', count: 1 } }])],
  ['an empty inventory', set('presence', ['inventory'], [])],
  ['item count 1', set('presence', ['inventory'], [{ slot: 1, item: { id: 'minecraft:stone', count: 1 } }])],
  ['item count 64', set('presence', ['inventory'], [{ slot: 1, item: { id: 'minecraft:stone', count: 64 } }])],
  ['a modded item id', set('presence', ['inventory'], [{ slot: 1, item: { id: 'create:brass_ingot', count: 3 } }])],
  ['damage 0', set('presence', ['inventory'], [{ slot: 1, item: { ...ITEM, damage: 0 } }])],
  ['logout with 6 inventory slots', set('logout', ['inventory'], Array.from({ length: 6 }, (_, i) => ({ slot: i, item: { id: 'minecraft:stone', count: 1 } })))],
  ['pops 0', set('death', ['pops'], 0)],
  ['duration 0', set('ping', ['duration'], 0)],
  ['fractional saturation', set('presence', ['attributes', 'saturation'], 3.75)],
  ['resend_request without include', set('resend_request', ['include'], undefined)],
  ['resend_request of entity_owner', set('resend_request', ['include'], ['entity_owner'])],
  ['a chat component object', set('chat', ['message'], { text: 'hi', color: 'gold', extra: [{ text: '!' }] })],
  ['a chat component array', set('chat', ['message'], [{ text: 'a' }, 'b'])],
  ['a negative timestamp', set('login', ['timestamp'], -1)],
];

const refused: Array<[string, P, string]> = [
  ['x above +30,000,000', set('ping', ['position', 'x'], 30_000_000.5), '/position/x'],
  ['x below -30,000,000', set('ping', ['position', 'x'], -30_000_001), '/position/x'],
  ['z above +30,000,000', set('death', ['position', 'z'], 30_000_001), '/position/z'],
  ['z below -30,000,000', set('death', ['position', 'z'], -30_000_000.5), '/position/z'],
  ['y below -64', set('ping', ['position', 'y'], -64.5), '/position/y'],
  ['an unknown dimension', set('ping', ['position', 'dimension'], 'the_aether'), '/position/dimension'],
  ['a 2-character name', set('login', ['player', 'name'], 'Ab'), '/player/name'],
  ['a 17-character name', set('login', ['player', 'name'], 'Abcdefghijklmn_12'), '/player/name'],
  ['a name with a space', set('death', ['player', 'name'], 'Bad Name'), '/player/name'],
  ['a player without uuid', set('death', ['player', 'uuid'], undefined), '/player'],
  ['a player uuid that is not a UUID', set('entity_owner', ['owner', 'uuid'], 'Steve'), '/owner/uuid'],
  ['pitch below -90', set('logout', ['position', 'pitch'], -90.1), '/position/pitch'],
  ['pitch above 90', set('logout', ['position', 'pitch'], 91), '/position/pitch'],
  ['an unknown posture', set('logout', ['position', 'phase'], 'flying'), '/position/phase'],
  ['slot -1', set('presence', ['inventory'], [{ slot: -1, item: { id: 'minecraft:stone', count: 1 } }]), '/inventory/0/slot'],
  ['a fractional slot', set('presence', ['inventory'], [{ slot: 1.5, item: { id: 'minecraft:stone', count: 1 } }]), '/inventory/0/slot'],
  ['item count 0', set('presence', ['inventory'], [{ slot: 1, item: { id: 'minecraft:stone', count: 0 } }]), '/inventory/0/item/count'],
  ['an item id without namespace', set('presence', ['inventory'], [{ slot: 1, item: { id: 'stone', count: 1 } }]), '/inventory/0/item/id'],
  ['an item without count', set('presence', ['inventory'], [{ slot: 1, item: { id: 'minecraft:stone' } }]), '/inventory/0/item'],
  ['damage -1', set('presence', ['inventory'], [{ slot: 1, item: { ...ITEM, damage: -1 } }]), '/inventory/0/item/damage'],
  ['an enchantment level that is not an integer', set('presence', ['inventory'], [{ slot: 1, item: { ...ITEM, enchantments: [{ id: 'minecraft:sharpness', level: 'V' }] } }]), '/inventory/0/item/enchantments/0/level'],
  ['logout with 7 inventory slots', set('logout', ['inventory'], Array.from({ length: 7 }, (_, i) => ({ slot: i, item: { id: 'minecraft:stone', count: 1 } }))), '/inventory'],
  ['pops -1', set('death', ['pops'], -1), '/pops'],
  ['duration -1', set('ping', ['duration'], -1), '/duration'],
  ['a colour without #', set('ping', ['color'], 'ff8800'), '/color'],
  ['a 3-digit colour', set('ping', ['color'], '#f80'), '/color'],
  ['a ping player that is a full object', set('ping', ['player'], { uuid: UUID_A, name: 'Steve' }), '/player'],
  ['a ping without position', set('ping', ['position'], undefined), ''],
  ['a message without to', set('message', ['to'], undefined), ''],
  ['a message to a name', set('message', ['to'], 'Steve'), '/to'],
  ['presence without attributes', set('presence', ['attributes'], undefined), ''],
  ['a health that is a string', set('presence', ['attributes', 'health'], '20'), '/attributes/health'],
  ['resend_request of chat', set('resend_request', ['include'], ['chat']), '/include/0'],
  ['a timestamp with a fraction', set('login', ['timestamp'], 1.5), '/timestamp'],
  ['a chat without message', set('chat', ['message'], undefined), ''],
  ['a chat component nested 40 levels deep', set('chat', ['message'], JSON.parse('{"extra":'.repeat(40) + '{}' + '}'.repeat(40)) as P), '/message'],
  ['a chat component over 32 KiB', set('chat', ['message'], { text: 'x'.repeat(33_000) }), '/message'],
  ['a chat string over 32 KiB', set('chat', ['message'], 'y'.repeat(33_000)), '/message'],
  ['an entity_owner without id', set('entity_owner', ['id'], undefined), ''],
  ['a minigame without game', set('minigame', ['game'], undefined), ''],
];

describe('accepted payloads', () => {
  it.each(accepted)('%s is accepted and delivered', async (_name, given) => {
    // A direct message is delivered to its addressee only: address it to the listening stream.
    const payload = given['type'] === 'message' ? { ...given, to: listener.uuid } : given;
    const res = await relay.post(payload, relay.headers(sender, key, VALID));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const pair = await validStream.nextPair();
    expect(pair.data.type).toBe(payload['type']);
  });
});

describe('refused payloads', () => {
  it.each(refused)('%s is refused with 400 invalid_payload naming its path', async (_name, payload, path) => {
    const res = await relay.post([base['chat'], payload], relay.headers(sender, key, INVALID));
    expect(res.status).toBe(400);
    expect(res.body['error']).toBe('invalid_payload');
    expect(String(res.body['message'])).toMatch(/nothing was published/);
    const details = res.body['details'] as Array<{ entry: number; path: string; reason: string }>;
    expect(details.length).toBeGreaterThan(0);
    expect(details.every((d) => d.entry === 1)).toBe(true);
    expect(details.some((d) => d.path === path), JSON.stringify(details)).toBe(true);
  });

  it('nothing of any refused batch was published: the next frame on that channel is a later sentinel', async () => {
    await relay.post({ type: 'chat', message: 'sentinel' }, relay.headers(sender, key, INVALID));
    expect((await invalidStream.nextPair()).data).toEqual({ type: 'chat', message: 'sentinel' });
  });
});

describe('normalisation', () => {
  it('UUIDs arrive dashed and lower-case, dimensions lower-case, wherever they were written otherwise', async () => {
    const loud = '3F1E8D2A6B7C4D5E9F10112233445566';
    const payloads = [
      { type: 'ping', player: loud, position: { ...POSITION, dimension: 'NeThEr' } },
      { type: 'death', player: { uuid: loud, name: 'Steve' }, position: { ...POSITION, dimension: 'END' } },
      { type: 'message', message: 'hi', to: loud.toLowerCase() },
      { type: 'entity_owner', id: '7', owner: { uuid: loud, name: 'Steve' } },
    ];
    const res = await relay.post(payloads, relay.headers(sender, key, VALID));
    expect(res.status).toBe(200);
    const ping = (await validStream.nextPair()).data as unknown as P & { position: P };
    expect(ping['player']).toBe(UUID_A);
    expect(ping.position['dimension']).toBe('nether');
    const death = (await validStream.nextPair()).data as unknown as P & { player: P; position: P };
    expect(death.player['uuid']).toBe(UUID_A);
    expect(death.position['dimension']).toBe('end');
    // The DM is addressed to someone else, so the listener does not hear it.
    const owner = (await validStream.nextPair()).data as unknown as P & { owner: P };
    expect(owner.owner['uuid']).toBe(UUID_A);
  });
});
