// Writers that fail over to another region (tools/chaos/check-region-failover.ts): a POST sent to
// two regions may be stored once in each, and that duplicate only passes the write checker; a reader
// sent both copies, each once at its own place, is no anomaly.
import { describe, expect, it } from 'vitest';
import { mayRepeatAcrossRegions } from '../../tools/chaos/check-region-failover.js';
import { checkRegionReaders } from '../../tools/chaos/check-region-readers.js';
import { checkWrites } from '../../tools/chaos/check-writes.js';
import type { ClientRecord, LogEntry, WriteOp } from '../../tools/chaos/records.js';

const CH = 'play.example.net';
const A = 'http://127.0.0.1:4001';
const B = 'http://127.0.0.1:4002';
const C = 'http://127.0.0.1:4003';
const mayRepeat = mayRepeatAcrossRegions((origin) => ({ [A]: 'a', [B]: 'b', [C]: 'c' })[origin] ?? null);

const op = (id: string, invokedAt: number, origins?: string[], entries = 1): WriteOp => ({
  id,
  writer: id.split(':')[0]!,
  channel: CH,
  entries: Array.from({ length: entries }, (_, i) => `${id}:${i}`),
  invokedAt,
  completedAt: invokedAt + 5,
  outcome: 'ok',
  refusal: null,
  attempts: origins?.length ?? 1,
  ...(origins !== undefined ? { origins } : {}),
});
const at = (region: string, seq: number, message: string): LogEntry => ({ region, seq, channel: CH, message });
const classes = (r: { anomalies: Array<{ class: string }> }): string[] => r.anomalies.map((a) => a.class);

describe('the write checker with writers that fail over', () => {
  it('lets a POST sent to a then b be stored once in each, counted once, and checks the rest as before', () => {
    // wa_2:1 was stored in a as a's relays were killed, then sent again to b; wa_2:2 was posted at home.
    const log = [at('a', 1, 'wa_2:1:0'), at('a', 2, 'wa_2:1:1'), at('b', 1, 'wa_2:1:0'), at('b', 2, 'wa_2:1:1'), at('a', 3, 'wa_2:2:0')];
    const r = checkWrites([op('wa_2:1', 0, [A, B], 2), op('wa_2:2', 10)], log, mayRepeat);
    expect(r.anomalies).toEqual([]);
    expect(r.counts).toMatchObject({ acknowledged: 2, present: 2, duplicated: 0, repeatedAllowed: 1 });
  });

  it('still finds a POST stored twice in one region, three times, in a region it was not sent to, or one that never failed over', () => {
    const twiceInA = checkWrites([op('wa_2:1', 0, [A, B])], [at('a', 1, 'wa_2:1:0'), at('a', 2, 'wa_2:1:0')], mayRepeat);
    expect(classes(twiceInA)).toEqual(['duplicated']);
    const thrice = checkWrites([op('wa_2:1', 0, [A, B, C])], [at('a', 1, 'wa_2:1:0'), at('b', 1, 'wa_2:1:0'), at('c', 1, 'wa_2:1:0')], mayRepeat);
    expect(classes(thrice)).toEqual(['duplicated']);
    const elsewhere = checkWrites([op('wa_2:1', 0, [A, B])], [at('a', 1, 'wa_2:1:0'), at('c', 1, 'wa_2:1:0')], mayRepeat);
    expect(classes(elsewhere)).toEqual(['duplicated']);
    const stayedHome = checkWrites([op('wa_1:1', 0, [A, A])], [at('a', 1, 'wa_1:1:0'), at('b', 1, 'wa_1:1:0')], mayRepeat);
    expect(classes(stayedHome)).toEqual(['duplicated']);
    const noRoute = checkWrites([op('wa_1:1', 0)], [at('a', 1, 'wa_1:1:0'), at('b', 1, 'wa_1:1:0')], mayRepeat);
    expect(classes(noRoute)).toEqual(['duplicated']);
  });

  it('still finds an acknowledged POST that failed over and is stored nowhere', () => {
    const r = checkWrites([op('wa_2:1', 0, [A, B])], [], mayRepeat);
    expect(classes(r)).toEqual(['lost']);
  });
});

describe('the reader checker with a payload in two regions', () => {
  it("takes each copy at the place its frame's id names, each once", () => {
    const log = [at('a', 1, 'x'), at('b', 1, 'x'), at('a', 2, 'y')];
    const client: ClientRecord<string> = {
      id: 'r1#1',
      reader: 'r1',
      account: 'r1',
      channel: CH,
      startId: null,
      frames: [
        { t: 1, id: 'a:1', message: 'x' },
        { t: 2, id: 'a:1.b:1', message: 'x' },
        { t: 3, id: 'a:2.b:1', message: 'y' },
      ],
      opens: [],
      closed: null,
    };
    const r = checkRegionReaders([client], log);
    expect(r.anomalies).toEqual([]);
    // The same copy twice is still a duplicate frame.
    const twice = checkRegionReaders([{ ...client, frames: [...client.frames, { t: 4, id: 'a:2.b:1', message: 'x' }] }], log);
    expect(classes(twice)).toEqual(['duplicate-frame']);
  });
});
