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
}

export function gateConnections(server: Server, options: ConnectionGateOptions): void {
  const open = new Map<string, number>();
  const warnings = new ThrottledWarnings(options.logger);
  const groupOf = (address: string): string => fairnessGroup(address, options.ipv6Prefix);
  // Shared by every socket rather than a closure each: a gateway holds its streams' connections by
  // the ten thousand, and what stays with each is one more entry in its close listeners. The peer
  // read at the connection is kept by the socket, so it is still there at the close.
  function left(this: Socket): void {
    const group = groupOf(this.remoteAddress ?? '');
    const held = (open.get(group) ?? 1) - 1;
    if (held > 0) open.set(group, held);
    else open.delete(group);
  }
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
      if (held >= options.perAddress) {
        options.refused('per_address');
        warnings.warn('per_address', { peer, held }, `connections refused: one address holds its ${options.perAddress} (${options.setting}); if it is your proxy, name it in TRUSTED_PROXIES`);
        return void socket.resetAndDestroy();
      }
      open.set(group, held + 1);
      socket.on('close', left);
    }
    silent.watch(socket);
  });
  // Node refuses beyond server.maxConnections itself, before any listener; it says so with 'drop'.
  server.on('drop', (data) => {
    options.refused('total');
    warnings.warn('total', { peer: data?.remoteAddress, max: server.maxConnections }, 'connections refused: the port holds all the connections it takes');
  });
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
