// A TCP proxy on loopback that the fault campaign places on the connections it wants to break (NATS
// cluster routes, each relay's connections to NATS), in the manner of Toxiproxy: a link is passed,
// cut, blackholed or slowed, and healed back, without privileges and without netem.
//
// No mode loses or corrupts bytes of a connection that survives it, since neither does a real
// network under TCP: a blackhole stops forwarding (the bytes wait, back-pressure reaches the sender)
// and healing delivers them in order, unless an end gave up on the silence first (its own ping
// timeout), as it would on a partitioned network. A cut resets every connection and every new one.

import { createServer, connect, type Server, type Socket } from 'node:net';

export type ProxyMode =
  /** Forward both ways. */
  | { kind: 'pass' }
  /** Reset every connection, and each new one at once: a peer that is gone. */
  | { kind: 'cut' }
  /** Forward nothing, close nothing: a partition that drops packets. */
  | { kind: 'blackhole' }
  /** Forward each chunk this long after it arrived, in order: a slow or congested link. */
  | { kind: 'slow'; delayMs: number };

export interface ProxyTarget {
  host: string;
  port: number;
}

/**
 * Reads what a client sent so far (Latin-1) and says whether it may use this proxy: true, false (the
 * connection is reset), or undefined while it cannot tell yet. NATS gateways gossip the addresses
 * they know, so a super-cluster's proxies admit only the region each was placed for.
 */
export type ProxyAdmits = (sent: string) => boolean | undefined;

/** One direction of a link: chunks waiting (blackholed or delayed) and whether the source is paused for them. */
class Direction {
  private readonly queue: Array<{ chunk: Buffer; due: number }> = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly from: Socket;
  private readonly to: Socket;
  private readonly proxy: TcpProxy;

  constructor(from: Socket, to: Socket, proxy: TcpProxy) {
    this.from = from;
    this.to = to;
    this.proxy = proxy;
    from.on('data', (chunk: Buffer) => this.push(chunk));
  }

  private push(chunk: Buffer): void {
    const mode = this.proxy.mode;
    const delay = mode.kind === 'slow' ? mode.delayMs : 0;
    this.queue.push({ chunk, due: Date.now() + delay });
    this.flush();
  }

  /** Forwards what is due, unless blackholed; waits (paused source) while the destination is full. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.proxy.mode.kind === 'blackhole' || this.to.destroyed) {
      if (this.queue.length > 0) this.from.pause();
      return;
    }
    const now = Date.now();
    while (this.queue.length > 0) {
      const head = this.queue[0]!;
      if (head.due > now) {
        this.timer = setTimeout(() => this.flush(), head.due - now);
        break;
      }
      this.queue.shift();
      if (!this.to.write(head.chunk)) {
        this.from.pause();
        this.to.once('drain', () => this.flush());
        return;
      }
    }
    // Delayed chunks keep the source reading (latency, not a stall); a long queue is bounded by pausing.
    if (this.queue.length < 256) this.from.resume();
    else this.from.pause();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.queue.length = 0;
  }
}

/** A client that has not shown who it is within this many bytes is refused. */
const SCREEN_LIMIT = 8192;

class Link {
  readonly client: Socket;
  private upstream: Socket | null = null;
  private directions: Direction[] = [];
  private readonly proxy: TcpProxy;
  private ended = false;

  constructor(client: Socket, proxy: TcpProxy) {
    this.client = client;
    this.proxy = proxy;
    client.setNoDelay(true);
    if (proxy.admits !== undefined) this.screen(client, proxy.admits);
    client.on('error', () => this.end());
    client.on('close', () => this.end());
    // Nothing is read from the client until upstream is there (a blackholed connect waits for the heal).
    client.pause();
  }

  /** Connects upstream (at once, or when a blackhole heals). */
  open(): void {
    if (this.ended || this.upstream !== null) return;
    const up = connect(this.proxy.target.port, this.proxy.target.host);
    this.upstream = up;
    up.setNoDelay(true);
    up.on('error', () => this.end());
    up.on('close', () => this.end());
    this.directions = [new Direction(this.client, up, this.proxy), new Direction(up, this.client, this.proxy)];
    up.once('connect', () => this.flush());
    up.pause();
  }

  get connected(): boolean {
    return this.upstream !== null;
  }

  /** Registered before the forwarding: a refused client's bytes reach nothing past the reset. */
  private screen(client: Socket, admits: ProxyAdmits): void {
    let sent = '';
    const onData = (chunk: Buffer): void => {
      sent += chunk.toString('latin1');
      const verdict = admits(sent) ?? (sent.length > SCREEN_LIMIT ? false : undefined);
      if (verdict === undefined) return;
      client.off('data', onData);
      if (!verdict) this.reset();
    };
    client.on('data', onData);
  }

  flush(): void {
    if (this.upstream?.connecting === true) return;
    for (const d of this.directions) d.flush();
  }

  /** Reset: both ends see the connection fail, as with a peer that vanished. */
  reset(): void {
    if (this.ended) return;
    this.client.resetAndDestroy();
    this.upstream?.resetAndDestroy();
    this.end();
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const d of this.directions) d.stop();
    if (!this.client.destroyed) this.client.destroy();
    if (this.upstream !== null && !this.upstream.destroyed) this.upstream.destroy();
    this.proxy.forget(this);
  }
}

export class TcpProxy {
  readonly name: string;
  readonly target: ProxyTarget;
  private current: ProxyMode = { kind: 'pass' };
  private readonly server: Server;
  private readonly links = new Set<Link>();
  /** Connections accepted since the start (a test asks whether a peer came back). */
  accepted = 0;
  readonly admits: ProxyAdmits | undefined;

  constructor(name: string, target: ProxyTarget, admits?: ProxyAdmits) {
    this.name = name;
    this.target = target;
    this.admits = admits;
    this.server = createServer((socket) => this.accept(socket));
  }

  /** Listens on 127.0.0.1 (on `port`, or a free one); resolves with the port. */
  listen(port = 0): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve(this.port);
      });
    });
  }

  get port(): number {
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error(`proxy ${this.name} is not listening`);
    return address.port;
  }

  get mode(): ProxyMode {
    return this.current;
  }

  /** Connections open now. */
  get open(): number {
    return this.links.size;
  }

  set(mode: ProxyMode): void {
    this.current = mode;
    if (mode.kind === 'cut') for (const l of [...this.links]) l.reset();
    if (mode.kind === 'blackhole') return;
    for (const l of this.links) {
      if (!l.connected) l.open();
      else l.flush();
    }
  }

  heal(): void {
    this.set({ kind: 'pass' });
  }

  private accept(socket: Socket): void {
    this.accepted++;
    if (this.current.kind === 'cut') {
      socket.on('error', () => undefined);
      socket.resetAndDestroy();
      return;
    }
    const link = new Link(socket, this);
    this.links.add(link);
    if (this.current.kind !== 'blackhole') link.open();
  }

  forget(link: Link): void {
    this.links.delete(link);
  }

  async close(): Promise<void> {
    for (const l of [...this.links]) l.reset();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
