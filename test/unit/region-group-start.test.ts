// With regions, a channel's group first reads where its channel is in every region's log, and the
// gateway sends a stream its `ready` once the group hears the channel (delivery/channel-hub.ts join).
// A frame its client posts once ready must reach it however slowly those reads are answered: a CI
// run's stream in a region cut off (leader gets refused, direct gets after) never got the frame its
// client posted next, which the group's late read had counted as seen. NATS is played by fakes
// (test/helpers/region-group-fakes.ts) so the reads can be held unanswered at will.

import { describe, expect, it } from 'vitest';
import { FakeLogs, hub, listener, ORDER } from '../helpers/region-group-fakes.js';

/** Gateway us's hub over logs whose gets wait until `answerOnceAsked` (this region's log holds 5). */
function slowToAnswer(): { logs: FakeLogs; h: ReturnType<typeof hub>; answerOnceAsked: () => Promise<void> } {
  const logs = new FakeLogs();
  logs.held.set('RELAY_REGION_US', [5]);
  let answer!: () => void;
  logs.gate = new Promise((resolve) => (answer = resolve));
  const asked = new Promise<void>((resolve) => (logs.onGet = resolve));
  return { logs, h: hub(logs), answerOnceAsked: () => asked.then(answer) };
}

/**
 * A stream of gateway us joins the channel's new group (null: a bridge's, every channel); this
 * region's log holds 5, and 6 is stored just after the group's last read of where it starts is
 * answered, before it subscribes: 6 is neither read then nor heard live.
 */
async function joinedWithOneBetween(channel?: string | null): Promise<{ logs: FakeLogs; h: ReturnType<typeof hub> } & ReturnType<typeof listener>> {
  const logs = new FakeLogs();
  logs.held.set('RELAY_REGION_US', [5]);
  const h = hub(logs);
  const joining = listener(channel);
  let reads = 0;
  logs.onGet = () => void (++reads === ORDER.length && queueMicrotask(() => logs.store(6)));
  await h.join(joining.stream);
  return { logs, h, ...joining };
}

describe("a channel group's start with regions", () => {
  it('delivers the frame a client posts as soon as it is told ready, though the reads of where the channel is were answered after it was stored', async () => {
    const { logs, h, answerOnceAsked } = slowToAnswer();
    const { stream, got, until } = listener();
    const joined = h.join(stream);
    expect(joined).not.toBeNull();
    // The client posts the moment it is ready; the group's reads are answered only after.
    const posted = joined!.then(() => logs.store(6));
    await answerOnceAsked();
    await posted;
    await until(1);
    expect(got).toEqual(['us6']);
    expect(h.groupOf(stream)!.position.id(ORDER)).toBe('a:10.b:20.us:6');
    h.close();
  });

  it('delivers a frame stored between those reads and the subscription though nothing follows it (a quiet channel), then the next, each once', async () => {
    const { logs, h, stream, got, until } = await joinedWithOneBetween();
    expect(logs.held.get('RELAY_REGION_US')).toEqual([5, 6]);
    await until(1);
    expect(got).toEqual(['us6']);
    logs.store(7);
    await until(2);
    expect(got).toEqual(['us6', 'us7']);
    expect(h.groupOf(stream)!.position.id(ORDER)).toBe('a:10.b:20.us:7');
    h.close();
  });

  it("delivers to a bridge's group, which sees no gap, a frame stored between those reads and the subscription though a later one is heard first", async () => {
    const { logs, h, got, until } = await joinedWithOneBetween(null);
    // Heard live before the group has read what came before it.
    logs.store(7);
    await until(2);
    expect(got).toEqual(['us6', 'us7']);
    logs.store(8);
    await until(3);
    expect(got).toEqual(['us6', 'us7', 'us8']);
    h.close();
  });

  it("keeps the order of what waited for the group's start and what a hold of the whole feed (a claim re-read) queued after it: nothing is lost", async () => {
    const logs = new FakeLogs();
    logs.held.set('RELAY_REGION_US', [5]);
    const h = hub(logs);
    // The bridges' group: a frame sent before an older one of its subject makes the older one look seen.
    const { stream, got, until } = listener(null);
    let reads = 0;
    let answer!: () => void;
    // The start's reads answer at once; what the group then reads of each log is answered late.
    logs.onGet = () => void (++reads === ORDER.length + 1 && (logs.late = new Promise((resolve) => (answer = resolve))));
    await h.join(stream);
    logs.store(6);
    let endHold!: () => void;
    const holding = h.hold.during(() => new Promise<void>((resolve) => (endHold = resolve)));
    logs.store(7);
    answer();
    await h.groupOf(stream)!.caughtUp;
    endHold();
    await holding;
    await until(2);
    expect(got).toEqual(['us6', 'us7']);
    h.close();
  });

  it('tells a second stream joining while the group starts that it is ready only once the group hears, and one joining later at once', async () => {
    const { logs, h, answerOnceAsked } = slowToAnswer();
    const first = listener();
    const second = listener();
    const joined = h.join(first.stream);
    const alsoJoined = h.join(second.stream);
    expect(alsoJoined).not.toBeNull();
    // The second client posts the moment it is ready.
    const posted = alsoJoined!.then(() => logs.store(6));
    await answerOnceAsked();
    await Promise.all([joined, posted]);
    await Promise.all([first.until(1), second.until(1)]);
    expect([first.got, second.got]).toEqual([['us6'], ['us6']]);
    expect(h.join(listener().stream)).toBeNull();
    h.close();
  });
});
