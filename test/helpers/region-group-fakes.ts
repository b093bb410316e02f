// NATS as a gateway's channel groups see it with regions (delivery/channel-group.ts), played by fakes
// so a copy can be held behind, or the group's first reads held unanswered, at will. The gateway
// reads the logs only by message gets (core/log-walk.ts), which is what FakeLogs answers; `store`
// appends a frame to a log and, once a group has subscribed, RePublishes it to the group at once.

import { JetStreamApiError, type JetStreamManager } from '@nats-io/jetstream';
import { headers as natsHeaders, type Msg, type MsgHdrs, type NatsConnection } from '@nats-io/nats-core';
import { createLogger, ThrottledWarnings } from '../../services/core/logger.js';
import { RelayMetrics } from '../../services/core/metrics.js';
import { channelSubject } from '../../services/core/subjects.js';
import { Header } from '../../services/core/wire-headers.js';
import { ChannelGroup } from '../../services/gateway/delivery/channel-group.js';
import type { GroupContext } from '../../services/gateway/delivery/group-context.js';
import { ChannelHub } from '../../services/gateway/delivery/channel-hub.js';
import { HeardLogs } from '../../services/gateway/delivery/heard-logs.js';
import { LiveHold } from '../../services/gateway/delivery/live-hold.js';
import { ResumeWindows } from '../../services/gateway/delivery/resume-window.js';
import type { ClientStream } from '../../services/gateway/stream/client-stream.js';
import type { StreamFrame } from '../../services/gateway/stream/stream-context.js';
import { TurnFlusher } from '../../services/gateway/stream/turn-flusher.js';

export const CHANNEL = 'play.example.net';
const TOKEN = channelSubject(CHANNEL).slice('channel.'.length);
const SENDER = '11111111-1111-4111-8111-111111111111';
/** Gateway `us` hears regions a and b from its copies of their logs, and its own. */
export const ORDER = ['a', 'b', 'us'];
const subjectIn = (region: string): string => `region.${region}.channel.${TOKEN}`;

function stored(region: string, seq: number, previous: number): { headers: MsgHdrs; data: Uint8Array } {
  const h = natsHeaders();
  for (const [k, v] of Object.entries({ [Header.Type]: 'chat', [Header.Sender]: SENDER })) h.set(k, v);
  h.set(Header.Sequence, String(seq));
  h.set(Header.LastSequence, String(previous));
  h.set(Header.Subject, subjectIn(region));
  return { headers: h, data: new TextEncoder().encode(JSON.stringify({ type: 'chat', message: `${region}${seq}` })) };
}

type Query = { seq?: number; next_by_subj?: string; last_by_subj?: string };

/** What gateway us holds of each log: its own region's log and its copies, by stream name. */
export class FakeLogs {
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
  /** While set, every get waits for it (a log slow to answer), and is answered as the log is then. */
  gate: Promise<void> | null = null;
  /** While set, every get is answered as the log is now, but only once it settles (an answer slow to arrive). */
  late: Promise<void> | null = null;
  /** Told of each get as it is asked. */
  onGet: () => void = () => undefined;
  private live: ((err: Error | null, msg: Msg) => void) | undefined;

  /** The connection the group subscribes on. */
  readonly nc = {
    subscribe: (_s: string, o: { callback: (err: Error | null, msg: Msg) => void }) => ((this.live = o.callback), { unsubscribe: () => (this.live = undefined) }),
    flush: () => Promise.resolve(),
  } as unknown as NatsConnection;

  /** Whether a group has subscribed. */
  get subscribed(): boolean {
    return this.live !== undefined;
  }

  /** Hands a RePublished message to the subscribed group, as the origin's live feed does. */
  republish(region: string, seq: number, previous: number): void {
    const m = stored(region, seq, previous);
    this.live!(null, { subject: `live.${subjectIn(region)}`, headers: m.headers, data: m.data, reply: undefined } as unknown as Msg);
  }

  /** A frame stored on the channel in this region's own log: RePublished to whoever listens now. */
  store(seq: number): void {
    const seqs = this.held.get('RELAY_REGION_US')!;
    const previous = seqs.at(-1) ?? 0;
    seqs.push(seq);
    if (this.subscribed) this.republish('us', seq, previous);
  }

  private async read(stream: string, q: Query): Promise<{ seq: number; subject: string; header: MsgHdrs; data: Uint8Array } | null> {
    this.onGet();
    if (this.gate !== null) await this.gate;
    const seqs = this.held.get(stream) ?? [];
    const at = stream.indexOf('_AT_');
    const region = stream.slice('RELAY_REGION_'.length, at < 0 ? undefined : at).toLowerCase();
    const last = q.last_by_subj?.endsWith('>') === true ? Math.max(seqs.at(-1) ?? 0, this.newest.get(stream) ?? 0) : seqs.at(-1);
    const pick = q.last_by_subj !== undefined ? last : seqs.find((s) => s >= (q.seq ?? 1));
    const late = this.late;
    if (late !== null) await late;
    if (pick === undefined) return null;
    const m = stored(region, pick, 0);
    return { seq: pick, subject: subjectIn(region), header: m.headers, data: m.data };
  }

  readonly jsm = {
    streams: {
      getMessage: (stream: string, q: Query) =>
        this.refusingLeaderGets ? Promise.reject(new JetStreamApiError({ code: 503, err_code: 10008, description: 'JetStream system temporarily unavailable' })) : this.read(stream, q),
    },
    direct: { getMessage: (stream: string, q: Query) => this.read(stream, q) },
  } as unknown as JetStreamManager;
}

/** A stream listening to the channel (null: a bridge's, to every channel), and what it got ('<region><seq>'). */
export function listener(channel: string | null = CHANNEL): { stream: ClientStream; got: string[]; until: (n: number) => Promise<void> } {
  const got: string[] = [];
  let wake = (): void => undefined;
  const stream = {
    account: 'listener',
    channel,
    closed: false,
    receiveMask: 0xffff,
    bridge: channel === null,
    deliver: (f: StreamFrame) => {
      got.push(`${f.region!}${f.seq}`);
      wake();
      return 'queued';
    },
  } as unknown as ClientStream;
  const until = (n: number): Promise<void> =>
    new Promise((resolve) => {
      wake = () => void (got.length >= n && resolve());
      wake();
    });
  return { stream, got, until };
}

function context(logs: FakeLogs, hold: LiveHold): GroupContext {
  const metrics = new RelayMetrics('t');
  const logger = createLogger({ level: 'silent', pretty: false });
  return {
    jsm: logs.jsm,
    logger,
    warnings: new ThrottledWarnings(logger),
    metrics,
    windows: new ResumeWindows(1 << 20, metrics),
    flusher: new TurnFlusher(metrics),
    tracer: null,
    metaShape: 'spec',
    hold,
    logs: HeardLogs.of({ here: 'us', all: ORDER, home: 'a' }),
  };
}

/** A group of gateway us on the channel, with one listening stream. */
export function group(logs: FakeLogs, hold = new LiveHold()): { group: ChannelGroup; live: FakeLogs['republish']; got: string[]; until: (n: number) => Promise<void> } {
  const g = new ChannelGroup(CHANNEL, logs.nc, context(logs, hold));
  const { stream, got, until } = listener();
  g.streams.add(stream);
  return { group: g, live: (region, seq, previous) => logs.republish(region, seq, previous), got, until };
}

/** Gateway us's hub, whose groups a stream joins as the gateway's open does; `hub.hold` holds its live feed. */
export function hub(logs: FakeLogs): ChannelHub {
  const { hold: _hold, warnings: _warnings, ...o } = context(logs, new LiveHold());
  return new ChannelHub({ ...o, nc: logs.nc });
}
