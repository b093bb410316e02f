// Property-based checks of validation: random valid payloads pass unchanged but for the documented
// normalisation; random mutations are rejected (or, for extra fields, stripped); nothing throws;
// and through the real HTTP ingress, valid means 200 and invalid means 400, never a 5xx.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPayload } from '../schemas/validate.js';
import { normaliseUuid } from '../schemas/uuid.js';
import type { CreatedKey } from '../services/core/keys.js';
import { RelayFixture, type Player } from './helpers/relay.js';

const hex = (n: number): fc.Arbitrary<string> => fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF'), minLength: n, maxLength: n });
const uuid = fc.oneof(
  fc.tuple(hex(8), hex(4), hex(4), hex(4), hex(12)).map((p) => p.join('-')),
  hex(32),
);
const name = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_'), minLength: 3, maxLength: 16 });
const player = fc.record({ uuid, name });
const coord = fc.double({ min: -30_000_000, max: 30_000_000, noNaN: true, noDefaultInfinity: true });
const dimension = fc.constantFrom('overworld', 'nether', 'end', 'OVERWORLD', 'Nether', 'eNd');
const position = fc.record({ x: coord, y: fc.double({ min: -64, max: 1e6, noNaN: true, noDefaultInfinity: true }), z: coord, dimension });
const idPart = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789_'), minLength: 1, maxLength: 20 });
const item = fc.record(
  {
    id: fc.tuple(idPart, idPart).map(([a, b]) => `${a}:${b}`),
    count: fc.integer({ min: 1, max: 64 }),
    damage: fc.nat(),
    maxDamage: fc.nat(),
    enchantments: fc.array(fc.record({ id: idPart, level: fc.integer({ min: 0, max: 255 }) }), { maxLength: 3 }),
    name: fc.string({ maxLength: 30 }),
    nbt: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
  },
  { requiredKeys: ['id', 'count'] },
);
const slot = fc.record({ slot: fc.nat({ max: 200 }), item });
const timestamp = fc.integer({ min: 0, max: 4_102_444_800_000 });
const chatComponent = fc.oneof(fc.string({ maxLength: 200 }), fc.record({ text: fc.string({ maxLength: 50 }), color: fc.constantFrom('red', 'gold') }));
const num = fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 });

const payloads: Record<string, fc.Arbitrary<Record<string, unknown>>> = {
  chat: fc.record({ type: fc.constant('chat'), message: chatComponent }),
  death: fc.record({ type: fc.constant('death'), player, pops: fc.nat(), timestamp, position }, { requiredKeys: ['type', 'player'] }),
  entity_owner: fc.record({ type: fc.constant('entity_owner'), id: fc.string({ minLength: 1, maxLength: 20 }), owner: player }),
  keepalive: fc.record({ type: fc.constant('keepalive') }),
  login: fc.record({ type: fc.constant('login'), player, timestamp }, { requiredKeys: ['type', 'player'] }),
  logout: fc.record(
    {
      type: fc.constant('logout'),
      player,
      inventory: fc.array(slot, { maxLength: 6 }),
      pops: fc.nat(),
      timestamp,
      position: fc.record({
        x: coord,
        y: fc.double({ min: -64, max: 1e6, noNaN: true, noDefaultInfinity: true }),
        z: coord,
        dimension,
        phase: fc.constantFrom('standing', 'sneaking', 'swimming'),
        pitch: fc.double({ min: -90, max: 90, noNaN: true }),
        yaw: num,
      }),
    },
    { requiredKeys: ['type', 'player'] },
  ),
  message: fc.record({ type: fc.constant('message'), message: chatComponent, to: uuid }),
  minigame: fc.record({ type: fc.constant('minigame'), game: fc.string({ minLength: 1, maxLength: 20 }), gamedata: fc.jsonValue({ maxDepth: 3 }) }, { requiredKeys: ['type', 'game'] }),
  ping: fc.record(
    { type: fc.constant('ping'), player: uuid, position, color: hex(6).map((h) => `#${h}`), duration: fc.double({ min: 0, max: 1e6, noNaN: true, noDefaultInfinity: true }) },
    { requiredKeys: ['type', 'player', 'position'] },
  ),
  presence: fc.record({
    type: fc.constant('presence'),
    inventory: fc.array(slot, { maxLength: 10 }),
    attributes: fc.record({ absorption: num, health: num, hunger: num, oxygen: num, saturation: num }),
  }),
  resend_request: fc.record({ type: fc.constant('resend_request'), include: fc.subarray(['presence', 'logout', 'entity_owner']) }, { requiredKeys: ['type'] }),
};
const anyValid = fc.oneof(...Object.values(payloads));

/** What ingress promises to change: UUIDs to dashed lower case, dimensions to lower case. Nothing else. */
function normalised(p: unknown): unknown {
  return JSON.parse(JSON.stringify(p), (k, v: unknown) => {
    if (typeof v !== 'string') return v;
    if (k === 'dimension') return v.toLowerCase();
    if (k === 'uuid' || k === 'to' || (k === 'player' && /^[0-9a-fA-F-]{32,36}$/.test(v))) return normaliseUuid(v) ?? v;
    return v;
  });
}

/** Mutations that make a payload invalid, each with a JSON path we can name. */
type Mutation = (p: Record<string, unknown>) => Record<string, unknown> | null;
const mutations: Record<string, Mutation> = {
  'drop the type': (p) => ({ ...p, type: undefined }),
  'a wrong type name': (p) => ({ ...p, type: `${String(p['type'])}x` }),
  'a position out of the world': (p) => (isObj(p['position']) ? { ...p, position: { ...p['position'], x: 30_000_001 } } : null),
  'a y below -64': (p) => (isObj(p['position']) ? { ...p, position: { ...p['position'], y: -65 } } : null),
  'a short player name': (p) => (isObj(p['player']) ? { ...p, player: { ...p['player'], name: 'ab' } } : null),
  'a uuid that is not one': (p) => ('to' in p ? { ...p, to: 'nobody' } : typeof p['player'] === 'string' ? { ...p, player: 'nobody' } : null),
  'a count of zero': (p) => (Array.isArray(p['inventory']) && p['inventory'].length > 0 ? { ...p, inventory: [{ slot: 0, item: { id: 'a:b', count: 0 } }] } : null),
  'a number where a string belongs': (p) => ('message' in p ? { ...p, message: 42 } : 'game' in p ? { ...p, game: 7 } : null),
};
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

describe('validation properties', () => {
  it('every valid payload is accepted and comes out equal to its input but for the documented normalisation', () => {
    fc.assert(
      fc.property(anyValid, (p) => {
        const input = structuredClone(p);
        const result = checkPayload(p);
        expect(result.ok, JSON.stringify(result)).toBe(true);
        // Compared as JSON, which is what goes on the wire (JSON has no -0).
        if (result.ok) expect(JSON.parse(JSON.stringify(result.payload))).toEqual(normalised(input));
      }),
      { numRuns: 400 },
    );
  });

  it('extra fields anywhere in a valid payload are stripped, never a reason to refuse', () => {
    fc.assert(
      fc.property(anyValid, fc.string({ minLength: 1, maxLength: 8 }).filter((k) => !['type', '__proto__'].includes(k)), (p, extraKey) => {
        const expected = normalised(structuredClone(p));
        const withExtra = { ...p, [`x_${extraKey}`]: { injected: true } };
        const result = checkPayload(withExtra);
        expect(result.ok).toBe(true);
        if (result.ok) expect(JSON.parse(JSON.stringify(result.payload))).toEqual(expected);
      }),
      { numRuns: 200 },
    );
  });

  it('every mutation that breaks a constraint is refused with issues, and nothing throws', () => {
    fc.assert(
      fc.property(anyValid, fc.constantFrom(...Object.keys(mutations)), (p, which) => {
        const mutated = mutations[which]!(structuredClone(p));
        fc.pre(mutated !== null);
        const result = checkPayload(JSON.parse(JSON.stringify(mutated)));
        expect(result.ok).toBe(false);
        if (!result.ok) expect(result.issues.length).toBeGreaterThan(0);
      }),
      { numRuns: 400 },
    );
  });

  it('arbitrary JSON never makes validation throw', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (v) => {
        expect(() => checkPayload(v)).not.toThrow();
      }),
      { numRuns: 500 },
    );
  });
});

describe('through the real ingress', () => {
  let relay: RelayFixture;
  let key: CreatedKey;
  let sender: Player;
  beforeAll(async () => {
    relay = await RelayFixture.start({ env: { RATE_LIMIT_PER_SECOND: '0' } });
    key = await relay.createKey();
    sender = relay.player();
  });
  afterAll(async () => {
    await relay?.close();
  });

  it('random valid payloads get 200, random broken ones 400, and nothing gets a 5xx', async () => {
    const valid = fc.sample(anyValid, 60);
    // Without a type, an object carrying `message` is a re-attribution envelope, which the spec has
    // ordinary keys drop silently (200): that mutation is checked above, not over HTTP.
    const httpMutations = Object.keys(mutations).filter((m) => m !== 'drop the type');
    const broken = fc
      .sample(fc.tuple(anyValid, fc.constantFrom(...httpMutations)), 200)
      .map(([p, m]) => mutations[m]!(p))
      .filter((p): p is Record<string, unknown> => p !== null)
      .slice(0, 60);
    const junk = fc.sample(fc.jsonValue({ maxDepth: 3 }), 40);
    const h = relay.headers(sender, key, 'props.example.net');
    for (const p of valid) expect((await relay.post(p, h)).status, JSON.stringify(p)).toBe(200);
    for (const p of broken) expect((await relay.post(JSON.parse(JSON.stringify(p)) as unknown, h)).status, JSON.stringify(p)).toBe(400);
    for (const j of junk) expect((await relay.post(JSON.stringify(j), h)).status).toBeLessThan(500);
  });
});
