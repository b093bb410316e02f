// The id grammar (schemas/event-id.ts): what the gateway accepts as Last-Event-ID and what the
// client library keeps. Both forms round-trip; anything else is refused, never read as something close.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EVENT_ID_PATTERN, formatEventId, MAX_EVENT_ID_LENGTH, MAX_ID_REGIONS, parseEventId, REGION_NAME_PATTERN, UnnamablePosition, type EventPosition } from '../../schemas/event-id.js';
import { EVENT_ID as CLIENT_EVENT_ID } from '../../clients/typescript/src/generated/event-id.js';

const regions = (entries: Array<[string, number]>): EventPosition => ({ kind: 'regions', seqs: new Map(entries) });

describe('an id without regions', () => {
  it.each(['0', '1', '1042', '007', '9'.repeat(15)])('%s is the sequence it spells', (id) => {
    expect(parseEventId(id)).toEqual({ kind: 'single', seq: Number(id) });
  });

  it('of 16 digits is refused: 15 stay below 2^53, where a JSON number would round to a neighbour', () => {
    expect(Number('9'.repeat(15))).toBeLessThan(Number.MAX_SAFE_INTEGER);
    expect(parseEventId(String(Number.MAX_SAFE_INTEGER))).toBeNull();
    expect(parseEventId('1'.repeat(16))).toBeNull();
  });

  it('is written as the bare number', () => {
    expect(formatEventId({ kind: 'single', seq: 1042 })).toBe('1042');
  });
});

describe("an id with regions: each region's position", () => {
  it('round-trips, regions in the mesh’s order, those at 0 left out', () => {
    const position = regions([
      ['us-west', 77],
      ['eu', 1042],
      ['ap', 0],
    ]);
    const id = formatEventId(position, ['eu', 'us-west', 'ap']);
    expect(id).toBe('eu:1042.us-west:77');
    expect(parseEventId(id)).toEqual(regions([
      ['eu', 1042],
      ['us-west', 77],
    ]));
  });

  it('names regions outside the given order after it, sorted, so every gateway writes one id for one position', () => {
    expect(formatEventId(regions([['zz', 3], ['b', 2], ['a', 1]]), ['a'])).toBe('a:1.b:2.zz:3');
  });

  it.each([
    ['a region named twice', 'eu:1.eu:2'],
    ['a region in capitals', 'EU:1'],
    ['a region starting with a digit', '1eu:1'],
    ['a region name of 17 characters', `${'a'.repeat(17)}:1`],
    ['a region with an underscore', 'ap_2:1'],
    ['a missing sequence', 'eu:'],
    ['a trailing separator', 'eu:1.'],
    ['a sign', 'eu:-1'],
    ['a sequence of 16 digits', `eu:${'1'.repeat(16)}`],
    ['a space', 'eu:1. us:2'],
    ['a repeated header joined by Node', 'eu:1, eu:1'],
    ['a number and a region', '12.eu:1'],
    ['one region too many', Array.from({ length: MAX_ID_REGIONS + 1 }, (_, i) => `r${i}:1`).join('.')],
  ])('%s (%s) is refused', (_what, id) => {
    expect(parseEventId(id)).toBeNull();
  });

  it('at its longest (every region at its longest name and sequence) is within the stated length, and parses', () => {
    const longest = Array.from({ length: MAX_ID_REGIONS }, (_, i) => `${'r'.repeat(14)}${String(i).padStart(2, '0')}:${'9'.repeat(15)}`).join('.');
    expect(longest.length).toBeLessThanOrEqual(MAX_EVENT_ID_LENGTH);
    expect(parseEventId(longest)?.kind).toBe('regions');
  });
});

describe('one grammar everywhere', () => {
  it('the client library keeps exactly the ids the relay parses (its pattern is generated from this one)', () => {
    for (const id of ['1042', '0', 'eu:1042.us:77', 'eu:1.eu:2', 'EU:1', '7:8', '€', 'eu:1.']) {
      // The pattern alone admits a repeated region; the relay's parser refuses it, and the client sends it back for the relay to say so.
      expect(CLIENT_EVENT_ID.test(id), id).toBe(new RegExp(EVENT_ID_PATTERN).test(id));
    }
  });

  it("a region's name in an id is a region name as settings spell it", () => {
    const name = new RegExp(REGION_NAME_PATTERN);
    for (const r of ['eu', 'us-west', 'ap2']) {
      expect(name.test(r)).toBe(true);
      expect(parseEventId(`${r}:5`)).toEqual(regions([[r, 5]]));
    }
    // `_` joins regions in stream names (RELAY_EU_AT_US): no region may hold one.
    expect(name.test('ap_2')).toBe(false);
    expect(parseEventId('ap_2:5')).toBeNull();
  });
});

describe('writing an id', () => {
  it('of any position the grammar can name, gives an id that parses back to it (seeded)', () => {
    const regionName = fc.stringMatching(new RegExp(REGION_NAME_PATTERN));
    const seq = fc.integer({ min: 1, max: 999_999_999_999_999 });
    fc.assert(
      fc.property(fc.uniqueArray(fc.tuple(regionName, seq), { minLength: 1, maxLength: MAX_ID_REGIONS, selector: ([r]) => r }), (entries) => {
        const id = formatEventId(regions(entries));
        expect(id.length).toBeLessThanOrEqual(MAX_EVENT_ID_LENGTH);
        expect(new RegExp(EVENT_ID_PATTERN).test(id)).toBe(true);
        expect(parseEventId(id)).toEqual(regions([...entries].sort(([a], [b]) => (a < b ? -1 : 1))));
      }),
      { seed: 20261205, numRuns: 500 },
    );
  });

  it.each([
    ['nothing from any region (an empty id: line would reset what EventSource keeps)', regions([['eu', 0]])],
    ['a sequence of 16 digits', regions([['eu', 1e15]])],
    ['more regions than an id holds', regions(Array.from({ length: MAX_ID_REGIONS + 1 }, (_, i) => [`r${i}`, 1] as [string, number]))],
    ['a region name outside the grammar', regions([['EU', 1]])],
  ])('refuses %s rather than write an id the relay would refuse back', (_what, position) => {
    expect(() => formatEventId(position)).toThrow(UnnamablePosition);
  });
});
