// The mesh as the console shows it, assembled from what every node already writes to NATS: node
// heartbeats (KV relay-nodes) and stream claims (KV relay-streams), with regions each region's
// (mesh-parts.ts), keys and bans, and the live feed's counts (channel-activity.ts). Rates are slopes
// between two heartbeats; the overview's history is a sample every few seconds over the last ten minutes.

import type { JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import type { ChannelView, MeshSample, NodeView, Overview, StreamView } from '../../schemas/admin-api.js';
import type { NodeRecord, StreamClaim } from '../../schemas/records.js';
import type { BanStore } from '../core/bans.js';
import type { KeyStore } from '../core/keys.js';
import type { Logger } from '../core/logger.js';
import { ChannelActivity } from './channel-activity.js';
import { MeshParts } from './mesh-parts.js';
import { keyStatus } from '../core/key-view.js';

const SAMPLE_MS = 5000;
const HISTORY = 120;
const DEFAULT_BEAT_MS = 5000;

interface Rates {
  framesOut: number | null;
  entries: number | null;
}

export class MeshView {
  private readonly parts: MeshParts[];
  private readonly activity: ChannelActivity;
  private readonly keys: KeyStore;
  private readonly bans: BanStore;
  private readonly rates = new Map<string, Rates>();
  private readonly history: MeshSample[] = [];
  private lastPayloads = 0;
  private sampler: NodeJS.Timeout | undefined;

  /** `regions`: every region of the mesh (null: a mesh without regions). */
  constructor(options: { nc: NatsConnection; js: JetStreamClient; regions: readonly string[] | null; keys: KeyStore; bans: BanStore; nodeTimeoutMs: number; logger: Logger }) {
    this.parts = (options.regions ?? [null]).map(
      (region) =>
        new MeshParts({
          js: options.js,
          region,
          nodeTimeoutMs: options.nodeTimeoutMs,
          logger: options.logger,
          onBeat: (record, previous) => this.rates.set(record.node, ratesBetween(previous, record)),
          onGone: (previous) => this.rates.delete(previous.node),
        }),
    );
    this.activity = new ChannelActivity(options.nc, options.regions !== null, options.logger);
    this.keys = options.keys;
    this.bans = options.bans;
  }

  async start(): Promise<void> {
    await Promise.all(this.parts.map((p) => p.start()));
    this.sampler = setInterval(() => this.sample(), SAMPLE_MS).unref();
  }

  async stop(): Promise<void> {
    if (this.sampler !== undefined) clearInterval(this.sampler);
    this.activity.stop();
    await Promise.all(this.parts.map((p) => p.stop()));
  }

  /** Every claim of every region read, with its region (null without regions). */
  private *claims(): Iterable<StreamClaim & { region: string | null }> {
    for (const p of this.parts) for (const c of p.claims()) yield { ...c, region: p.region };
  }

  private get claimCount(): number {
    return this.parts.reduce((n, p) => n + p.claimCount, 0);
  }

  nodes(now = Date.now()): NodeView[] {
    return this.parts
      .flatMap((p) => {
        const liveness = p.liveness();
        return liveness === null ? [] : [...liveness.mirror.values()].map((n) => ({ n, region: p.region, seen: liveness.lastBeat(n.node) }));
      })
      .map(({ n, region, seen }) => {
        const alive = seen !== undefined && now - seen < 3 * (n.beatMs ?? DEFAULT_BEAT_MS);
        const rates = this.rates.get(n.node);
        return {
          ...(region === null ? {} : { region }),
          node: n.node,
          role: n.role,
          version: n.version ?? null,
          alive,
          ready: n.ready ?? null,
          streams: n.streams ?? null,
          framesOutPerSecond: rates?.framesOut ?? null,
          entriesPerSecond: rates?.entries ?? null,
          startedAt: n.startedAt,
          uptimeSeconds: Math.max(0, Math.floor((now - Date.parse(n.startedAt)) / 1000)),
          heartbeatAt: n.heartbeatAt,
        };
      })
      .sort((a, b) => a.role.localeCompare(b.role) || a.node.localeCompare(b.node));
  }

  channels(now = Date.now()): ChannelView[] {
    const byChannel = new Map<string, ChannelView>();
    const view = (channel: string): ChannelView => {
      let v = byChannel.get(channel);
      if (v === undefined) {
        v = { channel, streams: 0, framesInPerSecond: 0, framesInLastMinute: 0, lastActivity: null };
        byChannel.set(channel, v);
      }
      return v;
    };
    for (const c of this.claims()) if (c.channel !== null) view(c.channel).streams++;
    for (const a of this.activity.snapshot(now)) {
      const v = view(a.channel);
      v.framesInLastMinute = a.lastMinute;
      v.framesInPerSecond = Math.round((a.lastMinute / 60) * 100) / 100;
      v.lastActivity = new Date(a.lastAt).toISOString();
    }
    return [...byChannel.values()].sort((a, b) => b.streams - a.streams || a.channel.localeCompare(b.channel));
  }

  /** Streams of one channel, and bridge streams hearing every channel. */
  streams(channel: string): StreamView[] {
    return [...this.claims()]
      .filter((c) => c.channel === channel || c.channel === null)
      .map(({ region, ...c }) => ({ ...c, ...(region === null ? {} : { region }), keyLabel: this.keys.mirror.get(c.clientId)?.label ?? null }))
      .sort((a, b) => a.openedAt.localeCompare(b.openedAt));
  }

  overview(now = Date.now()): Overview {
    const channels = new Set<string>();
    for (const c of this.claims()) if (c.channel !== null) channels.add(c.channel);
    return {
      nodes: this.nodes(now),
      streams: this.claimCount,
      channels: channels.size,
      keys: [...this.keys.mirror.values()].filter((k) => keyStatus(k, now) === 'active').length,
      bans: this.bans.list(now).filter((b) => this.bans.activeBan(b.uuid, now) !== undefined).length,
      history: [...this.history],
    };
  }

  private sample(now = Date.now()): void {
    const payloads = this.activity.payloads;
    let framesOut = 0;
    for (const n of this.nodes(now)) if (n.alive) framesOut += n.framesOutPerSecond ?? 0;
    this.history.push({
      at: Math.floor(now / 1000),
      streams: this.claimCount,
      framesInPerSecond: Math.round(((payloads - this.lastPayloads) / (SAMPLE_MS / 1000)) * 100) / 100,
      framesOutPerSecond: Math.round(framesOut * 100) / 100,
    });
    this.lastPayloads = payloads;
    if (this.history.length > HISTORY) this.history.shift();
  }
}

/** Per-second rates of a node's counters between its previous heartbeat and this one. */
function ratesBetween(previous: NodeRecord | undefined, record: NodeRecord): Rates {
  const seconds = previous === undefined ? 0 : (Date.parse(record.heartbeatAt) - Date.parse(previous.heartbeatAt)) / 1000;
  const rate = (a: number | undefined, b: number | undefined): number | null =>
    seconds > 0 && a !== undefined && b !== undefined && b >= a ? Math.round(((b - a) / seconds) * 100) / 100 : null;
  return { framesOut: rate(previous?.framesDelivered, record.framesDelivered), entries: rate(previous?.entriesPublished, record.entriesPublished) };
}
