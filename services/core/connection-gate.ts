// What a connection meets first, before any byte of it is parsed: its address's share of the port
// and a deadline for its first byte. Both services put it in front of their HTTP server. Without
// it, 1,100 sockets from one address that never finished their headers held the admin port's
// 1,024 connections for the 10 s of Node's headers deadline, wave after wave, and no operator got in.
//
// The address is the socket's peer (nothing is read yet, so no X-Forwarded-For), grouped as the
// look-up limits group it (client-address.ts: an IPv6 peer per block, an IPv4-mapped one as IPv4).
// A configured proxy (TRUSTED_PROXIES) brings every client through one address: it is not capped
// per address and has no first-byte deadline (it may open connections ahead of need); whoever
// reaches the port through it is the proxy's to bound.
//
// A refused socket is reset at once, without an answer: the request is not read yet, and an answer
// written before it, then a close with the request unread, reaches the client as a reset anyway;
// waiting to write one would let a stranger who never reads hold the socket it was meant to free.

import type { Server, Socket } from 'node:net';
import { fairnessGroup, type TrustProxy } from './client-address.js';
import { ThrottledWarnings, type Logger } from './logger.js';

/**
 * A connection that has sent nothing by then is reset. A client writes its request as soon as it is
 * connected (TLS ends at the proxy, whose peers are exempt), so 2 s is many round trips even on a
 * slow link, where Node's headers deadline would let a silent socket hold its place five times as
 * long. A stranger who sends a byte now and then meets that deadline instead.
 */
export const FIRST_BYTE_TIMEOUT_MS = 2000;

/** How often the sockets that have sent nothing yet are looked at: the deadline is met within this. */
const SWEEP_MS = FIRST_BYTE_TIMEOUT_MS / 8;

/** Why a connection was closed before a request was read: the address's cap, the port's, or silence. */
export type ConnectionRefusal = 'per_address' | 'total' | 'first_byte_timeout';

export interface ConnectionGateOptions {
  /** Open connections one address (IPv6: one `ipv6Prefix` block) may hold; 0: no per-address cap. */
  perAddress: number;
  ipv6Prefix: number;
  /** Peers counted only in the total and given no first-byte deadline: the configured proxies. */
  exempt: TrustProxy;
  /** The setting an operator raises, named in the warning a refusal logs. */
  setting: string;
  logger: Logger;
  refused(reason: ConnectionRefusal): void;
  /**
   * At its address's cap, a newcomer takes the place of that address's oldest connection not yet
   * vouched for (vouch()), instead of being refused. The admin service's: its operators share an
   * address with every local user (ADMIN_HOST=127.0.0.1, an ssh tunnel, a NAT, a container
   * engine's port forwarding), and one of them holding the cap with cheap public requests kept the
   * operator out for as long as it liked. A connection that carried an admin token is never let go.
   */
  evictUnvouched?: boolean;
}

export interface ConnectionGate {
  /** The connection carried a request that proved who sent it: never let go for a newcomer. */
  vouch(socket: Socket): void;
}

export function gateConnections(server: Server, options: ConnectionGateOptions): ConnectionGate {
  const open = new Map<string, number>();
  /** Per address, its connections not vouched for, oldest first (only with evictUnvouched). */
  const unvouched = new Map<string, Set<Socket>>();
  /** Sockets let go for a newcomer: already uncounted, their close must not uncount them again. */
  const evicted = new WeakSet<Socket>();
  const warnings = new ThrottledWarnings(options.logger);
  const groupOf = (address: string): string => fairnessGroup(address, options.ipv6Prefix);
  const forget = (group: string, socket: Socket): void => {
    const sockets = unvouched.get(group);
    if (sockets === undefined) return;
    sockets.delete(socket);
    if (sockets.size === 0) unvouched.delete(group);
  };
  // Shared by every socket rather than a closure each: a gateway holds its streams' connections by
  // the ten thousand, and what stays with each is one more entry in its close listeners. The peer
  // read at the connection is kept by the socket, so it is still there at the close.
  function left(this: Socket): void {
    const group = groupOf(this.remoteAddress ?? '');
    if (options.evictUnvouched === true) forget(group, this);
    if (evicted.has(this)) return;
    const held = (open.get(group) ?? 1) - 1;
    if (held > 0) open.set(group, held);
    else open.delete(group);
  }
  /** Lets the address's oldest unvouched connection go, its place counted for the newcomer; false when there is none. */
  const evictOldest = (group: string): boolean => {
    const oldest = unvouched.get(group)?.values().next().value;
    if (oldest === undefined) return false;
    // Reset for its address's cap all the same: counted and warned of as a refusal.
    options.refused('per_address');
    warnings.warn('per_address', { peer: oldest.remoteAddress, held: options.perAddress }, `connection let go: its address holds its ${options.perAddress} (${options.setting}) and a newcomer came; if it is your proxy, name it in TRUSTED_PROXIES`);
    forget(group, oldest);
    evicted.add(oldest);
    open.set(group, (open.get(group) ?? 1) - 1);
    oldest.resetAndDestroy();
    return true;
  };
  const silent = new FirstByteWatch((socket) => {
    options.refused('first_byte_timeout');
    socket.resetAndDestroy();
  });
  // Before the HTTP server's own listener: a socket reset here is never read, and Node's listener,
  // running after on a closed socket, frees what it sets up when the close event comes.
  server.prependListener('connection', (socket: Socket) => {
    const peer = socket.remoteAddress;
    // Gone before it was handed over: nobody to serve or count.
    if (peer === undefined) return void socket.destroy();
    if (options.exempt(peer, 0)) return;
    if (options.perAddress > 0) {
      const group = groupOf(peer);
      const held = open.get(group) ?? 0;
      if (held >= options.perAddress && !(options.evictUnvouched === true && evictOldest(group))) {
        options.refused('per_address');
        warnings.warn('per_address', { peer, held }, `connections refused: one address holds its ${options.perAddress} (${options.setting}); if it is your proxy, name it in TRUSTED_PROXIES`);
        return void socket.resetAndDestroy();
      }
      open.set(group, (open.get(group) ?? 0) + 1);
      if (options.evictUnvouched === true) {
        const sockets = unvouched.get(group) ?? new Set<Socket>();
        unvouched.set(group, sockets.add(socket));
      }
      socket.on('close', left);
    }
    silent.watch(socket);
  });
  // Node refuses beyond server.maxConnections itself, before any listener; it says so with 'drop'.
  server.on('drop', (data) => {
    options.refused('total');
    warnings.warn('total', { peer: data?.remoteAddress, max: server.maxConnections }, 'connections refused: the port holds all the connections it takes');
  });
  return {
    vouch(socket) {
      if (options.evictUnvouched !== true || socket.remoteAddress === undefined) return;
      forget(groupOf(socket.remoteAddress), socket);
    },
  };
}

/**
 * The sockets that have sent nothing yet, in the order they came, looked at every SWEEP_MS by one
 * timer (running only while there are some): a timer per connection cost each a timer object, and
 * either held the socket 2 s after it was gone (3 KiB a connection in a storm of short ones) or, held
 * weakly, a third more garbage collection. A socket that has sent a byte or is gone leaves at the
 * next look.
 */
class FirstByteWatch {
  private pending: Array<{ socket: Socket; deadline: number }> = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly onSilent: (socket: Socket) => void) {}

  watch(socket: Socket): void {
    this.pending.push({ socket, deadline: performance.now() + FIRST_BYTE_TIMEOUT_MS });
    this.timer ??= setInterval(() => this.sweep(), SWEEP_MS).unref();
  }

  private sweep(): void {
    const now = performance.now();
    this.pending = this.pending.filter(({ socket, deadline }) => {
      if (socket.destroyed || socket.bytesRead > 0) return false;
      if (deadline > now) return true;
      this.onSilent(socket);
      return false;
    });
    if (this.pending.length === 0 && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }
}
