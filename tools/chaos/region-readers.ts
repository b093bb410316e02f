// The region campaign's readers: each an account holding one stream on its channel through
// @channel-relay/client at its region's gateway, reconnecting there with Last-Event-ID (a region id,
// `a:12.b:7.c:3`). Now and then, and when its region is cut off or lost, the account opens a stream
// in another region resuming from the newest id it was sent: the relay must send it what it lacks
// from every region, nothing twice, and evict the older stream across regions.

import { RelayClient, type ClientState } from '../../clients/typescript/src/index.js';
import type { History } from './history.js';
import type { ClientRecord } from './records.js';
import { CAMPAIGN_AGENT } from './writers.js';

export interface RegionReaderOptions {
  name: string;
  channel: string;
  key: { clientId: string; clientSecret: string };
  regions: readonly string[];
  /** The region its first stream opens in. */
  home: number;
  /** The gateway's node id and base URL in a region. */
  gateway: (region: string) => { nodeId: string; url: string };
  history: History;
}

interface LiveClient {
  client: RelayClient;
  connected: Promise<void>;
  record: ClientRecord<string>;
  region: number;
}

export class RegionReader {
  readonly name: string;
  readonly clients: Array<ClientRecord<string>> = [];
  private readonly live = new Set<LiveClient>();
  private stopping = false;
  private first: Promise<void> = Promise.resolve();

  constructor(private readonly o: RegionReaderOptions) {
    this.name = o.name;
  }

  start(): void {
    this.first = this.open(null, this.o.home).connected;
  }

  async opened(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${this.name}'s stream did not open within ${ms} ms`)), ms)));
    try {
      await Promise.race([this.first, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The region its newest client is in. */
  region(): string {
    return this.o.regions[[...this.live].at(-1)?.region ?? this.o.home]!;
  }

  /** The account opens a stream in the next region, resuming from the newest id it was sent. */
  moveOn(): string {
    const from = [...this.live].at(-1)?.region ?? this.o.home;
    return this.open(this.lastId(), (from + 1) % this.o.regions.length).record.id;
  }

  /** The id of the newest frame any of its clients was sent (ids of one stream only move forward). */
  lastId(): string | null {
    let last: { t: number; id: string } | null = null;
    for (const c of this.clients) {
      const f = c.frames.at(-1);
      if (f !== undefined && (last === null || f.t >= last.t)) last = f;
    }
    return last?.id ?? this.clients.at(-1)?.startId ?? null;
  }

  running(): Array<ClientRecord<string>> {
    return [...this.live].map((c) => c.record);
  }

  private open(startId: string | null, region: number): LiveClient {
    const { history } = this.o;
    const gateway = this.o.gateway(this.o.regions[region]!);
    const record: ClientRecord<string> = { id: `${this.name}#${this.clients.length + 1}`, reader: this.name, account: this.name, channel: this.o.channel, region: this.o.regions[region]!, startId, frames: [], opens: [], closed: null };
    this.clients.push(record);
    const client = new RelayClient({
      url: gateway.url,
      server: this.o.channel,
      clientId: this.o.key.clientId,
      clientSecret: this.o.key.clientSecret,
      userAgent: CAMPAIGN_AGENT,
      token: () => `offline:${this.name}`,
      backoff: { baseMs: 250, capMs: 3000 },
      ...(startId !== null ? { lastEventId: startId } : {}),
    });
    const live: LiveClient = { client, record, region, connected: Promise.resolve() };
    this.live.add(live);
    client.on('payload', (f) => {
      if (f.id === null || f.payload.type !== 'chat') return;
      record.frames.push({ t: history.now(), id: f.id, message: typeof f.payload.message === 'string' ? f.payload.message : JSON.stringify(f.payload.message) });
    });
    client.on('state', (s) => this.onState(live, s, gateway.nodeId));
    history.record('stream', record.id, `new client of ${this.name} in ${this.o.regions[region]}${startId === null ? '' : ` from id ${startId}`}`);
    live.connected = client.connect();
    live.connected.catch(() => undefined);
    return live;
  }

  private onState(c: LiveClient, s: ClientState, gateway: string): void {
    const { history } = this.o;
    const id = c.record.id;
    if (s.state === 'open') {
      c.record.opens.push({ t: history.now(), gateway });
      history.record('stream', id, `open on ${gateway}${s.resumedFrom === null ? '' : ` resuming after ${s.resumedFrom}`}`);
    } else if (s.state === 'reconnecting') {
      history.record('stream', id, `reconnecting in ${s.delayMs} ms: ${s.reason}`);
    } else if (s.state === 'closed') {
      this.live.delete(c);
      if (this.stopping) return;
      c.record.closed = { t: history.now(), reason: s.reason };
      history.record('stream', id, `closed for good on ${gateway}: ${s.reason}`);
      // Evicted by its own newer stream: it goes on with that one, or a new one where it was.
      if (s.reason === 'evicted' && this.live.size === 0) this.open(this.lastId(), c.region);
    }
  }

  stop(): void {
    this.stopping = true;
    for (const c of [...this.live]) c.client.close();
  }
}
