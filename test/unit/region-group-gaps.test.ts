// With regions, a channel's gap holds only its own region (delivery/channel-group.ts): while region
// b's gap waits for b's copy to catch up (a link that dropped again), region a's frames keep flowing;
// once the copy has them, b's missing frames come first, then what waited, each once, in b's order.
// NATS is played by fakes here so the copy can be held behind at will: the gateway reads the log only
// by message gets (core/log-walk.ts), which is what the fake answers.

import { headers as natsHeaders, type Msg, type MsgHdrs, type NatsConnection } from '@nats-io/nats-core';
import { JetStreamApiError, type JetStreamManager } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { createLogger, ThrottledWarnings } from '../../services/core/logger.js';
import { RelayMetrics } from '../../services/core/metrics.js';
import { channelSubject } from '../../services/core/subjects.js';
import { Header } from '../../services/core/wire-headers.js';
import { ChannelGroup } from '../../services/gateway/delivery/channel-group.js';
import { HeardLogs } from '../../services/gateway/delivery/heard-logs.js';
import { LiveHold } from '../../services/gateway/delivery/live-hold.js';
import { ResumeWindows } from '../../services/gateway/delivery/resume-window.js';
import type { ClientStream } from '../../services/gateway/stream/client-stream.js';
import type { StreamFrame } from '../../services/gateway/stream/stream-context.js';
import { TurnFlusher } from '../../services/gateway/stream/turn-flusher.js';

const CHANNEL = 'play.example.net';
const TOKEN = channelSubject(CHANNEL).slice('channel.'.length);
const SENDER = '11111111-1111-4111-8111-111111111111';
const subjectIn = (region: string): string => `region.${region}.channel.${TOKEN}`;

function stored(region: string, seq: number, previous: number): { headers: MsgHdrs; data: Uint8Array } {
  const h = natsHeaders();
  for (const [k, v] of Object.entries({ [Header.Type]: 'chat', [Header.Sender]: SENDER })) h.set(k, v);
  h.set(Header.Sequence, String(seq));
  h.set(Header.LastSequence, String(previous));
  h.set(Header.Subject, subjectIn(region));
  return { headers: h, data: new TextEncoder().encode(JSON.stringify({ type: 'chat', message: `${region}${seq}` })) };
}

/** What gateway us holds of each log: its own region's log and its copies, by stream name. */
class FakeLogs {
  /** The channel's sequences in each stream. */
  readonly held = new Map<string, number[]>([
    ['RELAY_REGION_A_AT_US', [10]],
    ['RELAY_REGION_B_AT_US', [20]],
    ['RELAY_REGION_US', []],
  ]);
  /** A stream's newest sequence on any channel, when past the channel's own. */
  readonly newest = new Map<string, number>();

  /** Leader gets refused as a region cut off refuses them once the meta group is gone; direct gets still answer. */
  refusingLeaderGets = false;

  private read(stream: string, q: { seq?: number; next_by_subj?: string; last_by_subj?: string }): Promise<{ seq: number; subject: string; header: MsgHdrs; data: Uint8Array } | null> {
    const seqs = this.held.get(stream) ?? [];
    const at = stream.indexOf('_AT_');
    const region = stream.slice('RELAY_REGION_'.length, at < 0 ? undefined : at).toLowerCase();
    const last = q.last_by_subj?.endsWith('>') === true ? Math.max(seqs.at(-1) ?? 0, this.newest.get(stream) ?? 0) : seqs.at(-1);
    const pick = q.last_by_subj !== undefined ? last : seqs.find((s) => s >= (q.seq ?? 1));
    if (pick === undefined) return Promise.resolve(null);
    const m = stored(region, pick, 0);
    return Promise.resolve({ seq: pick, subject: subjectIn(region), header: m.headers, data: m.data });
  }

  readonly jsm = {
    streams: {
      getMessage: (stream: string, q: { seq?: number; next_by_subj?: string; last_by_subj?: string }) =>
        this.refusingLeaderGets ? Promise.reject(new JetStreamApiError({ code: 503, err_code: 10008, description: 'JetStream system temporarily unavailable' })) : this.read(stream, q),
    },
    direct: { getMessage: (stream: string, q: { seq?: number; next_by_subj?: string; last_by_subj?: string }) => this.read(stream, q) },
  } as unknown as JetStreamManager;
}

function group(logs: FakeLogs, hold = new LiveHold()): { group: ChannelGroup; live: (region: string, seq: number, previous: number) => void; got: string[]; until: (n: number) => Promise<void> } {
  let callback: ((err: Error | null, msg: Msg) => void) | undefined;
  const nc = { subscribe: (_s: string, o: { callback: typeof callback }) => ((callback = o.callback), { unsubscribe: () => undefined }) } as unknown as NatsConnection;
  const metrics = new RelayMetrics('t');
  const logger = createLogger({ level: 'silent', pretty: false });
  const g = new ChannelGroup(CHANNEL, nc, {
    jsm: logs.jsm,
    logger,
    warnings: new ThrottledWarnings(logger),
    metrics,
    windows: new ResumeWindows(1 << 20, metrics),
    flusher: new TurnFlusher(metrics),
    tracer: null,
    metaShape: 'spec',
    hold,
    logs: HeardLogs.of({ here: 'us', all: ['a', 'b', 'us'], home: 'a' }),
  });
  const got: string[] = [];
  let wake = (): void => undefined;
  const stream = {
    account: 'listener',
    receiveMask: 0xffff,
    bridge: false,
    deliver: (f: StreamFrame) => {
      got.push(`${f.region!}${f.seq}`);
      wake();
      return 'queued';
    },
  } as unknown as ClientStream;
  g.streams.add(stream);
  const live = (region: string, seq: number, previous: number): void => {
    const m = stored(region, seq, previous);
    callback!(null, { subject: `live.${subjectIn(region)}`, headers: m.headers, data: m.data, reply: undefined } as unknown as Msg);
  };
  const until = (n: number): Promise<void> =>
    new Promise((resolve) => {
      wake = () => void (got.length >= n && resolve());
      wake();
    });
  return { group: g, live, got, until };
}

describe("a channel's gap with regions", () => {
  it("holds only its own region while the copy lags: the other region's frames go on, then the gap and what waited, once each, in order", async () => {
    const logs = new FakeLogs();
    const { group: g, live, got, until } = group(logs);
    await g.started;
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
    await g.started;
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
    await g.started;
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

  it("catches up from a copy that lagged its origin when the group started, though the region sends nothing more (a quiet channel)", async () => {
    // Found by a resume onto a gateway without a group for its channel: b:21 was stored before the
    // group listened and not yet in the copy, so it was neither heard live nor seen as a gap.
    const logs = new FakeLogs();
    logs.held.set('RELAY_REGION_B', [20, 21]);
    const { group: g, got, until } = group(logs);
    await g.started;
    expect(g.position.id(['a', 'b', 'us'])).toBe('a:10.b:20');
    logs.held.set('RELAY_REGION_B_AT_US', [20, 21]);
    await until(1);
    expect(got).toEqual(['b21']);
    expect(g.position.id(['a', 'b', 'us'])).toBe('a:10.b:21');
    g.close();
  });
});
