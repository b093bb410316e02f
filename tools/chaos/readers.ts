// The campaign's readers: each an account holding one stream on its channel through
// @channel-relay/client, reconnecting with Last-Event-ID; its fetch goes to the next gateway at every
// attempt, as a load balancer would. Now and then (and when the nemesis pauses the gateway it is on)
// the account opens a second stream on the other gateway, resuming from where the first one is: the
// relay must evict one of the two. A reader whose every client was evicted opens a new one.

import { RelayClient, type ClientState, type FetchInit } from '../../clients/typescript/src/index.js';
import type { History } from './history.js';
import type { ClientRecord } from './records.js';
import { CAMPAIGN_AGENT, onOrigin } from './writers.js';

export interface ReaderOptions {
  name: string;
  channel: string;
  key: { clientId: string; clientSecret: string };
  /** The gateways' node ids and base URLs, as they are now. */
  gateways: () => ReadonlyArray<{ nodeId: string; url: string }>;
  history: History;
}

interface LiveClient {
  client: RelayClient;
  /** Its first connect(): resolved once open. */
  connected: Promise<void>;
  record: ClientRecord;
  /** The gateway its latest request went to. */
  gateway: string;
}

export class Reader {
  readonly name: string;
  readonly clients: ClientRecord[] = [];
  private readonly o: ReaderOptions;
  private readonly live = new Set<LiveClient>();
  private stopping = false;
  private first: Promise<void> = Promise.resolve();

  constructor(o: ReaderOptions) {
    this.o = o;
    this.name = o.name;
  }

  get channel(): string {
    return this.o.channel;
  }

  start(): void {
    this.first = this.open(null, 0).connected;
  }

  /** Resolves once its first stream is open; rejects after `ms`. */
  async opened(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${this.name}'s stream did not open within ${ms} ms`)), ms)));
    try {
      await Promise.race([this.first, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Whether one of its clients is on the gateway `nodeId` now. */
  isOn(nodeId: string): boolean {
    return [...this.live].some((c) => c.gateway === nodeId && c.client.state.state === 'open');
  }

  /** The account opens a second stream on the gateway after the one it is on, resuming where it is. */
  openSecond(): string {
    const on = [...this.live].at(-1)?.gateway;
    const gateways = this.o.gateways();
    const next = (gateways.findIndex((g) => g.nodeId === on) + 1) % gateways.length;
    return this.open(this.lastId(), next).record.id;
  }

  /** The newest frame any of its clients delivered. */
  lastId(): number | null {
    let last: number | null = null;
    for (const c of this.clients) {
      const id = c.frames.at(-1)?.id ?? c.startId;
      if (id !== null && (last === null || id > last)) last = id;
    }
    return last;
  }

  /** Its clients still running (the ones that must be caught up at the end). */
  running(): ClientRecord[] {
    return [...this.live].map((c) => c.record);
  }

  private open(startId: number | null, firstGateway: number): LiveClient {
    const { history } = this.o;
    const record: ClientRecord = { id: `${this.name}#${this.clients.length + 1}`, reader: this.name, account: this.name, channel: this.o.channel, startId, frames: [], opens: [], closed: null };
    this.clients.push(record);
    let turn = firstGateway;
    const live: LiveClient = {
      record,
      gateway: '',
      connected: Promise.resolve(),
      client: new RelayClient({
        url: this.o.gateways()[0]!.url,
        server: this.o.channel,
        clientId: this.o.key.clientId,
        clientSecret: this.o.key.clientSecret,
        userAgent: CAMPAIGN_AGENT,
        token: () => `offline:${this.name}`,
        backoff: { baseMs: 250, capMs: 5000 },
        ...(startId !== null ? { lastEventId: String(startId) } : {}),
        fetch: (url: string, init: FetchInit) => {
          const gateways = this.o.gateways();
          const g = gateways[turn++ % gateways.length]!;
          live.gateway = g.nodeId;
          return fetch(onOrigin(url, g.url), init);
        },
      }),
    };
    this.live.add(live);
    live.client.on('payload', (f) => {
      if (f.id === null || f.payload.type !== 'chat') return;
      record.frames.push({ t: history.now(), id: Number(f.id), message: typeof f.payload.message === 'string' ? f.payload.message : JSON.stringify(f.payload.message) });
    });
    live.client.on('state', (s) => this.onState(live, s));
    history.record('stream', record.id, `new client of ${this.name} on ${this.o.channel}${startId === null ? '' : ` from id ${startId}`}`);
    live.connected = live.client.connect();
    live.connected.catch(() => undefined);
    return live;
  }

  private onState(c: LiveClient, s: ClientState): void {
    const { history } = this.o;
    const id = c.record.id;
    if (s.state === 'open') {
      c.record.opens.push({ t: history.now(), gateway: c.gateway });
      history.record('stream', id, `open on ${c.gateway}${s.resumedFrom === null ? '' : ` resuming after ${s.resumedFrom}`}`);
    } else if (s.state === 'reconnecting') {
      history.record('stream', id, `reconnecting in ${s.delayMs} ms: ${s.reason}`);
    } else if (s.state === 'closed') {
      this.live.delete(c);
      // Closed by the campaign at its end: it ran to the end.
      if (this.stopping) return;
      c.record.closed = { t: history.now(), reason: s.reason };
      history.record('stream', id, `closed for good on ${c.gateway}: ${s.reason}`);
      // Evicted by another client of its own: the reader goes on with that one, or a new one.
      if (s.reason === 'evicted' && this.live.size === 0) this.open(this.lastId(), 0);
    }
  }

  stop(): void {
    this.stopping = true;
    for (const c of [...this.live]) c.client.close();
  }
}
