// With regions, a channel's gap holds only its own region (delivery/channel-group.ts): while region
// b's gap waits for b's copy to catch up (a link that dropped again), region a's frames keep flowing;
// once the copy has them, b's missing frames come first, then what waited, each once, in b's order.
// NATS is played by fakes (test/helpers/region-group-fakes.ts) so the copy can be held behind at will.

import { describe, expect, it } from 'vitest';
import { LiveHold } from '../../services/gateway/delivery/live-hold.js';
import { FakeLogs, group } from '../helpers/region-group-fakes.js';

describe("a channel's gap with regions", () => {
  it("holds only its own region while the copy lags: the other region's frames go on, then the gap and what waited, once each, in order", async () => {
    const logs = new FakeLogs();
    const { group: g, live, got, until } = group(logs);
    await g.caughtUp;
    expect(g.position.id(['a', 'b', 'us'])).toBe('a:10.b:20');
    // b:25 says b:23 came before it; the copy of b holds only up to 20 yet.
    live('b', 25, 23);
    live('b', 26, 25);
    live('a', 11, 10);
    await until(1);
    expect(got).toEqual(['a11']);
    // The copy catches up: 21 and 23 (22 went to another channel of b's log), then what waited.
    logs.held.set('RELAY_REGION_B_AT_US', [20, 21, 23, 25, 26]);
    await until(5);
    live('a', 12, 11);
    await until(6);
    expect(got).toEqual(['a11', 'b21', 'b23', 'b25', 'b26', 'a12']);
    expect(g.position.id(['a', 'b', 'us'])).toBe('a:12.b:26');
    g.close();
  });

  it('starts at the channel’s place and fills a gap from its region’s streams though leader gets are refused (a region cut off, a meta group re-electing)', async () => {
    const logs = new FakeLogs();
    logs.refusingLeaderGets = true;
    const { group: g, live, got, until } = group(logs);
    await g.caughtUp;
    // Found by the region chaos campaign: the group started from its first live frame, and a stream
    // resumed onto it never got what lay between its id and that frame.
    expect(g.position.id(['a', 'b', 'us'])).toBe('a:10.b:20');
    live('b', 25, 23);
    live('a', 11, 10);
    await until(1);
    logs.held.set('RELAY_REGION_B_AT_US', [20, 21, 23, 25]);
    await until(4);
    expect(got).toEqual(['a11', 'b21', 'b23', 'b25']);
    g.close();
  });

  it('keeps a held region’s later messages behind its held ones while the whole feed is held too (a claim re-read), so none is refilled or skipped', async () => {
    const logs = new FakeLogs();
    const hold = new LiveHold();
    const { group: g, live, got, until } = group(logs, hold);
    await g.caughtUp;
    live('b', 25, 23);
    // The gateway re-reads its claims: the whole feed waits; b's next messages arrive meanwhile.
    let endHold!: () => void;
    const holding = hold.during(() => new Promise<void>((r) => (endHold = r)));
    live('b', 26, 25);
    live('b', 27, 26);
    // The copy now holds the gap (24 was another channel's), but not 25 to 27: they are only in memory.
    logs.held.set('RELAY_REGION_B_AT_US', [20, 21, 23]);
    logs.newest.set('RELAY_REGION_B_AT_US', 24);
    await until(2);
    endHold();
    await holding;
    await until(5);
    expect(got).toEqual(['b21', 'b23', 'b25', 'b26', 'b27']);
    g.close();
  });

  it("fills a gap from a copy for a channel that region had no frame of at the start, though the frame missed was never heard live", async () => {
    // The origin stored b:21 before the group's subscription reached region b, and the copy had not
    // stored it yet: b:22 is the first frame heard. The group starts at 0 there, so 22 shows the gap.
    const logs = new FakeLogs();
    logs.held.set('RELAY_REGION_B_AT_US', []);
    const { group: g, live, got, until } = group(logs);
    await g.caughtUp;
    expect(g.position.id(['a', 'b', 'us'])).toBe('a:10');
    live('b', 22, 21);
    logs.held.set('RELAY_REGION_B_AT_US', [21, 22]);
    await until(2);
    expect(got).toEqual(['b21', 'b22']);
    g.close();
  });

  it("catches up from a copy that lagged its origin when the group started, though the region sends nothing more (a quiet channel)", async () => {
    // Found by a resume onto a gateway without a group for its channel: b:21 was stored before the
    // group listened and not yet in the copy, so it was neither heard live nor seen as a gap.
    const logs = new FakeLogs();
    logs.held.set('RELAY_REGION_B', [20, 21]);
    const { group: g, got, until } = group(logs);
    await g.caughtUp;
    expect(g.position.id(['a', 'b', 'us'])).toBe('a:10.b:20');
    logs.held.set('RELAY_REGION_B_AT_US', [20, 21]);
    await until(1);
    expect(got).toEqual(['b21']);
    expect(g.position.id(['a', 'b', 'us'])).toBe('a:10.b:21');
    g.close();
  });
});
