// One open SSE stream: it owns its connection, its queue and its coalescing state, and announces its
// end exactly once, whoever ends it (the client leaving, a slow read, or the relay closing it with a
// reason). Frames are queued and written once per event-loop turn (write coalescing: one syscall per
// stream per turn, however many frames arrived). While the client is not reading, frames wait in a
// bounded queue where a newer presence snapshot of a sender replaces the older one; past the bound
// the stream is closed with a reason.

import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { CloseReasonCode } from '../../../schemas/close.js';
import { takeOffHttp } from './bare-socket.js';
import { CloseReason, closeFrames } from './close-reason.js';
import { hearConnection, type ConnectionListener } from './connection-events.js';
import { LogPosition } from './log-position.js';
import { CoalescingQueue } from './presence-coalescing.js';
import { RegionSeen } from './region-seen.js';
import { encodeRetry, SSE_HEADERS } from './sse.js';
import type { Delivery, StreamContext, StreamFrame, StreamIdentity } from './stream-context.js';

/** How long a closed stream's socket may take to drain what was already written, whatever the reason. */
const CLOSE_GRACE_MS = 5000;

export class ClientStream implements ConnectionListener {
  readonly id: string;
  readonly account: string | null;
  readonly clientId: string;
  readonly channel: string | null;
  readonly receiveMask: number;
  readonly bridge: boolean;
  readonly agent: string | null;
  /** Epoch ms. */
  readonly openedAt = Date.now();

  /** Until the head is written (null from then on): the stream writes to its socket alone (bare-socket.ts). */
  private res: ServerResponse | null;
  /** Frames go straight to the socket (see flush). */
  private readonly socket: Socket;
  private readonly context: StreamContext;
  private readonly queue = new CoalescingQueue<StreamFrame>();
  /** Why it ended; null while open. */
  private endReason: CloseReason | null = null;
  /** Highest sequence queued; live frames at or below it are duplicates of a replay. */
  private lastSeq = 0;
  /** With regions: what it has of each region's log (made at its first region frame or resume). */
  private regions: RegionSeen | null = null;
  private blocked = false;
  private dirty = false;
  /** While a Last-Event-ID replay runs, live frames wait here. */
  private heldLive: StreamFrame[] | null = null;

  /** A stream on this connection; null when the client left already (there is nothing to undo). */
  static attach(identity: StreamIdentity, res: ServerResponse, context: StreamContext): ClientStream | null {
    const socket = res.socket;
    if (res.destroyed || socket === null || socket.destroyed) return null;
    return new ClientStream(identity, res, socket, context);
  }

  private constructor(identity: StreamIdentity, res: ServerResponse, socket: Socket, context: StreamContext) {
    this.id = identity.id;
    this.account = identity.account;
    this.clientId = identity.clientId;
    this.channel = identity.channel;
    this.receiveMask = identity.receiveMask;
    this.bridge = identity.bridge;
    this.agent = identity.agent;
    this.res = res;
    this.socket = socket;
    this.context = context;
    hearConnection(this, socket);
  }

  get closed(): boolean {
    return this.endReason !== null;
  }

  /**
   * Sends the head and the client's retry delay. Returns false when the stream ended before (evicted,
   * banned, revoked or drained while its claim was written): it then sends only its close frames.
   */
  open(retryMs: number): boolean {
    const res = this.res;
    if (res === null) return false;
    // The body is delimited by the connection's end (Connection: close), not chunked: each write
    // goes to the socket as it is, with no chunk framing around it.
    res.useChunkedEncodingByDefault = false;
    const reason = this.endReason;
    if (reason !== null) {
      if (!res.destroyed && reason !== CloseReason.ClientClosed) {
        res.writeHead(200, SSE_HEADERS);
        res.end(closeFrames(reason));
      }
      return false;
    }
    this.socket.setNoDelay(true);
    // Corked until `ready`: the head, the retry and the ready frames leave in one write (one
    // system call per open instead of two; opens are bound by the machine's CPU).
    this.socket.cork();
    res.writeHead(200, SSE_HEADERS);
    res.write(encodeRetry(retryMs));
    if (takeOffHttp(res, this.socket) === 'unknown_internals') this.context.stayedOnHttp();
    this.res = null;
    return true;
  }

  /** The stream hears its channel from now on: tells the client, and sends the head `open` corked. */
  ready(frames: Buffer): void {
    this.writeRaw(frames);
    this.sendHead();
  }

  /** Sends the head and the retry `open` corked, without waiting for `ready`. */
  sendHead(): void {
    while (this.socket.writableCorked > 0) this.socket.uncork();
  }

  /** The connection closed under us (the client left, or the socket failed). */
  clientGone(): void {
    this.end(CloseReason.ClientClosed);
  }

  /** The socket took what was waiting: write what queued meanwhile. */
  drained(): void {
    this.blocked = false;
    this.flush();
  }

  /** Queues a live frame the delivery rules let through (held back while a replay runs). */
  deliver(frame: StreamFrame): Delivery {
    if (this.heldLive !== null) {
      if (this.endReason !== null) return 'skipped';
      this.heldLive.push(frame);
      return 'queued';
    }
    return this.enqueue(frame);
  }

  /** Queues a frame read from the log for this stream's replay. */
  deliverReplayed(frame: StreamFrame): void {
    this.enqueue(frame);
  }

  private enqueue(frame: StreamFrame): Delivery {
    if (this.endReason !== null) return 'skipped';
    if (frame.region !== undefined) {
      const bytes = (this.regions ??= new RegionSeen(new LogPosition(), [], false)).admit(frame, frame.region);
      if (bytes === null) return 'skipped';
      if (bytes !== frame.bytes) frame = { ...frame, bytes };
    } else if (frame.seq !== 0) {
      if (frame.seq <= this.lastSeq) return 'skipped';
      this.lastSeq = frame.seq;
    }
    const coalesced = this.queue.push(frame);
    if (coalesced) this.context.scheduler.countCoalesced();
    // The bound is on what waits for a client that is not reading; a large burst in one turn to a
    // client that reads is written out at the next flush.
    if (this.blocked) {
      if (this.queue.bytes <= this.context.maxQueuedBytes) return coalesced ? 'coalesced' : 'queued';
      this.close(CloseReason.SlowConsumer);
      return 'dropped';
    }
    if (!this.dirty) {
      this.dirty = true;
      this.context.scheduler.markDirty(this);
    }
    return coalesced ? 'coalesced' : 'queued';
  }

  /**
   * Writes everything queued in one write. Returns the number of pairs written. The body is
   * close-delimited and the headers went out when the stream opened, so frames are written to the
   * socket itself, skipping the response's write path (cork, a nextTick to uncork, bookkeeping):
   * about 5 % of the gateway's CPU under fanout in a profile, paid once per delivery.
   */
  flush(): number {
    this.dirty = false;
    if (this.endReason !== null || this.blocked || this.queue.length === 0) return 0;
    // A socket gone without its close reported yet: end the stream here, once per turn rather than
    // on every delivery, so nothing queues for it past this turn.
    if (this.socket.destroyed) {
      this.clientGone();
      return 0;
    }
    const pairs = this.queue.length;
    if (!this.socket.write(this.queue.take())) this.blocked = true;
    return pairs;
  }

  /** Writes raw bytes (comments) outside the frame queue. */
  writeRaw(bytes: Buffer): void {
    if (this.endReason === null && !this.socket.destroyed) this.socket.write(bytes);
  }

  /** From now until `releaseLiveFrames`, live frames wait (a Last-Event-ID replay goes first). */
  holdLiveFrames(): void {
    this.heldLive = [];
  }

  /** The sequence of the first live frame of `region` held since the hold began (null: none yet). */
  firstHeld(region: string): number | null {
    return this.heldLive?.find((f) => f.region === region)?.seq ?? null;
  }

  /** The client has every frame up to `seq`: none of them is sent again (held or live). */
  resumeAfter(seq: number): void {
    if (seq > this.lastSeq) this.lastSeq = seq;
  }

  /** With regions: the client has every frame up to `position`; `ahead`, further than its group in some region. */
  resumeAt(position: LogPosition, order: readonly string[], ahead: boolean): void {
    if (this.regions === null) this.regions = new RegionSeen(position.copy(), order, ahead);
    else this.regions.raise(position, order, ahead);
  }

  /** Ends a replay: live frames that arrived meanwhile are delivered, skipping what the replay sent. */
  releaseLiveFrames(): void {
    const held = this.heldLive ?? [];
    this.heldLive = null;
    for (const f of held) this.enqueue(f);
  }

  /**
   * Ends the stream with its close frames (what is queued goes out first). `retryMs` overrides the
   * catalogue's wait (a draining gateway spreads its clients out).
   */
  close(reason: CloseReasonCode, retryMs?: number): void {
    if (this.endReason !== null) return;
    // Not yet answered (closed while its claim was being written): `open` sends the close frames.
    if (this.res !== null) {
      this.end(reason);
      return;
    }
    const socket = this.socket;
    if (!socket.destroyed) {
      // What is queued goes out first, except to a client that is not reading (a slow consumer, or
      // one blocked now): it would only wait in memory, and the client resumes with Last-Event-ID.
      if (reason !== CloseReason.SlowConsumer) this.flush();
      socket.write(closeFrames(reason, retryMs));
    }
    this.end(reason);
    // Ended, then closed once what is queued is out, as the HTTP server ended a response with
    // Connection: close (not waiting for the client to close its side).
    socket.end(() => socket.destroy());
    // A client that never reads again would hold its socket (and what waits in it) for ever.
    const timer = setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
    socket.once('close', () => clearTimeout(timer));
  }

  /** The one place a stream ends: it happens once, and is announced once. */
  private end(reason: CloseReason): void {
    if (this.endReason !== null) return;
    // Ended between `open` and `ready`: the head `open` corked goes out before the end.
    this.sendHead();
    this.endReason = reason;
    this.queue.clear();
    this.heldLive = null;
    this.context.ended(this, reason);
  }
}
