// A list split over messages under a byte limit (the owner census, the claims told to other regions).
import { describe, expect, it } from 'vitest';
import { joinedRuns, messageRuns } from '../../services/core/message-runs.js';

describe('message runs', () => {
  it('a message exactly at the limit holds the run, one byte less splits it', () => {
    const items = ['"aaaa"', '"bb"', '"c"'];
    const whole = joinedRuns(items, '[', ']', 1024);
    expect(whole).toEqual(['["aaaa","bb","c"]']);
    const limit = Buffer.byteLength(whole[0]!);
    expect(joinedRuns(items, '[', ']', limit)).toEqual(whole);
    expect(joinedRuns(items, '[', ']', limit - 1)).toEqual(['["aaaa","bb"]', '["c"]']);
  });

  it('counts bytes, not characters, and every item lands once, in order', () => {
    const items = Array.from({ length: 40 }, (_, i) => JSON.stringify(`é${'x'.repeat(i % 7)}`));
    const texts = joinedRuns(items, '{"l":[', ']}', 40);
    for (const t of texts) expect(Buffer.byteLength(t)).toBeLessThanOrEqual(40);
    expect(texts.flatMap((t) => (JSON.parse(t) as { l: string[] }).l)).toEqual(items.map((i) => JSON.parse(i) as string));
  });

  it('holds at most maxItems a run, and gives an item too large for any message a run of its own', () => {
    expect(messageRuns(['1', '2', '3', '4', '5'], 2, 1024, 2)).toEqual([[0, 2], [2, 4], [4, 5]]);
    expect(messageRuns(['1', '"far too long"', '2'], 2, 8)).toEqual([[0, 1], [1, 2], [2, 3]]);
    expect(messageRuns([], 2, 8)).toEqual([]);
  });
});
