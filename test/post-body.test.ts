// The body of a POST: one payload or a batch, unknown types, stripping of unknown fields.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedKey } from '../services/core/keys.js';
import { ITEM, POSITION, UUID_A } from './helpers/payloads.js';
import { RelayFixture, type Player } from './helpers/relay.js';

let relay: RelayFixture;
let key: CreatedKey;
let sender: Player;
let n = 0;
const channel = (): string => `body-${++n}.example.net`;

beforeAll(async () => {
  relay = await RelayFixture.start();
  key = await relay.createKey();
  sender = relay.player();
});
afterAll(async () => {
  await relay?.close();
});

describe('batches', () => {
  it('a single object is one entry; an empty array is accepted with nothing to deliver', async () => {
    const ch = channel();
    const s = await relay.connect(relay.headers(relay.player(), key, ch));
    expect((await relay.post([], relay.headers(sender, key, ch))).body).toEqual({ accepted: 0, dropped: 0 });
    expect((await relay.post({ type: 'chat', message: 'single' }, relay.headers(sender, key, ch))).body).toEqual({ accepted: 1, dropped: 0 });
    expect((await s.nextPair()).data.message).toBe('single');
  });

  it('a body that is neither an object nor an array is refused with 400', async () => {
    for (const body of ['42', '"chat"', 'null', '[1, 2]']) {
      const res = await relay.post(body, relay.headers(sender, key, channel()));
      expect(res.status).toBe(400);
      expect(['invalid_payload', 'invalid_json']).toContain(res.body['error']);
    }
  });
});

describe('unknown types', () => {
  it('an unknown type is refused with 400 unknown_type naming the allowed types, even beside valid entries, and nothing is published', async () => {
    const ch = channel();
    const s = await relay.connect(relay.headers(relay.player(), key, ch));
    const res = await relay.post(
      [{ type: 'chat', message: 'valid' }, { type: 'teleport', x: 1 }, { type: 'chat', message: 'also valid' }],
      relay.headers(sender, key, ch),
    );
    expect(res.status).toBe(400);
    expect(res.body['error']).toBe('unknown_type');
    expect(res.body['details']).toEqual([
      { entry: 1, path: '/type', reason: expect.stringMatching(/unknown payload type "teleport"; expected one of chat, death/) },
    ]);
    await relay.post({ type: 'chat', message: 'sentinel' }, relay.headers(sender, key, ch));
    expect((await s.nextPair()).data.message).toBe('sentinel');
  });

  it.each([['an entry with neither type nor message', { text: 'hi' }], ['a numeric type', { type: 7 }], ['an upper-case type', { type: 'CHAT', message: 'x' }]])(
    '%s is not a known type',
    async (_what, entry) => {
      const res = await relay.post([{ ...entry }], relay.headers(sender, key, channel()));
      expect(res.status).toBe(400);
    },
  );
});

describe('unknown fields', () => {
  it('are stripped from known payloads, at the top level and inside Player, Position and items', async () => {
    const ch = channel();
    const s = await relay.connect(relay.headers(relay.player(), key, ch));
    const payloads = [
      { type: 'chat', message: 'hi', name: 'Spoofed', colour: 'red' },
      { type: 'death', player: { uuid: UUID_A, name: 'Steve', rank: 'admin' }, position: { ...POSITION, velocity: 3 }, killer: 'Herobrine' },
      { type: 'presence', inventory: [{ slot: 0, item: { ...ITEM, glint: true }, locked: true }], attributes: { absorption: 0, health: 20, hunger: 20, oxygen: 300, saturation: 5, luck: 7 } },
    ];
    expect((await relay.post(payloads, relay.headers(sender, key, ch))).status).toBe(200);
    expect((await s.nextPair()).data).toEqual({ type: 'chat', message: 'hi' });
    expect((await s.nextPair()).data).toEqual({ type: 'death', player: { uuid: UUID_A, name: 'Steve' }, position: POSITION });
    expect((await s.nextPair()).data).toEqual({
      type: 'presence',
      inventory: [{ slot: 0, item: ITEM }],
      attributes: { absorption: 0, health: 20, hunger: 20, oxygen: 300, saturation: 5 },
    });
  });

  it('free-form members are relayed as sent: item nbt, minigame gamedata, chat components', async () => {
    const ch = channel();
    const s = await relay.connect(relay.headers(relay.player(), key, ch));
    const nbt = { display: { Lore: ['"old"'] }, CustomModelData: 12, nested: { deep: [1, { x: null }] } };
    const gamedata = { round: 3, scores: { red: 1, blue: 2 }, anything: [true, 'x', null] };
    const component = { text: 'Hello ', extra: [{ text: 'world', color: 'gold', hoverEvent: { action: 'show_text', contents: 'hi' } }] };
    const payloads = [
      { type: 'presence', inventory: [{ slot: 3, item: { id: 'minecraft:stick', count: 1, nbt } }], attributes: { absorption: 0, health: 1, hunger: 1, oxygen: 1, saturation: 1 } },
      { type: 'minigame', game: 'bedwars', gamedata },
      { type: 'chat', message: component },
    ];
    expect((await relay.post(payloads, relay.headers(sender, key, ch))).status).toBe(200);
    const presence = (await s.nextPair()).data as unknown as { inventory: Array<{ item: { nbt: unknown } }> };
    expect(presence.inventory[0]!.item.nbt).toEqual(nbt);
    expect((await s.nextPair()).data['gamedata']).toEqual(gamedata);
    expect((await s.nextPair()).data['message']).toEqual(component);
  });

  it('timestamps are relayed untouched', async () => {
    const ch = channel();
    const s = await relay.connect(relay.headers(relay.player(), key, ch));
    const timestamp = 4102444800123;
    await relay.post({ type: 'login', player: { uuid: UUID_A, name: 'Steve' }, timestamp }, relay.headers(sender, key, ch));
    expect((await s.nextPair()).data['timestamp']).toBe(timestamp);
  });
});

describe('Content-Encoding', () => {
  // Guards: `Content-Encoding: gzip` on a plain body was ignored and the POST accepted (and a body
  // really compressed was refused as invalid JSON, saying nothing of why).
  it.each(['gzip', 'br', 'deflate', 'identity, gzip'])('%s is refused 415 unsupported_media_type, and nothing is stored', async (encoding) => {
    const ch = channel();
    const s = await relay.connect(relay.headers(relay.player(), key, ch));
    const r = await relay.post({ type: 'chat', message: 'encoded' }, relay.headers(sender, key, ch, { 'content-encoding': encoding }));
    expect(r.status).toBe(415);
    expect(r.body).toEqual({ error: 'unsupported_media_type', message: expect.stringContaining('Content-Encoding') });
    await relay.post({ type: 'chat', message: 'sentinel' }, relay.headers(sender, key, ch));
    expect((await s.nextPair()).data.message).toBe('sentinel');
  });

  it('identity (or none) is accepted', async () => {
    const r = await relay.post({ type: 'chat', message: 'plain' }, relay.headers(sender, key, channel(), { 'content-encoding': 'identity' }));
    expect(r.status).toBe(200);
  });
});
