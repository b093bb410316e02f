// One open SSE stream. Frames are queued and written once per event-loop turn (write coalescing:
// one syscall per stream per turn, however many frames arrived). While the client is not reading,
// frames wait in a bounded queue where a newer presence snapshot of a sender replaces the older one;
// past the bound the stream is closed with a reason.

import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { CloseReasonCode } from '../../schemas/close.js';
import { CloseReason, closeFrames } from './close-reason.js';
import type { Frame } from './frame.js';
import type { Listener } from './delivery-rules.js';
import { CoalescingQueue } from './presence-coalescing.js';

/** How long a slow consumer's socket may take to drain what was already queued, after its close. */
const SLOW_CLOSE_GRACE_MS = 5000;

export interface StreamIdentity {
  id: string;
  account: string | null;
  clientId: string;
  /** Readable channel, or null for a bridge stream hearing every channel. */
  channel: string | null;
  receiveMask: number;
  bridge: boolean;
}

/** Batches the writes of one event-loop turn, and the counting that goes with them. */
export interface FlushScheduler {
  markDirty(stream: ClientStream): void;
  /** A waiting presence snapshot was replaced by a newer one (counted once per turn, not per frame). */
  countCoalesced(): void;
}

/** Told when a stream ends, whoever ended it. */
export interface StreamOwner {
  streamClosed(stream: ClientStream, reason: CloseReason): void;
}

// Listeners shared by every stream (found through the response), rather than two closures each:
// a gateway holds tens of thousands of streams and every byte per stream counts.
const STREAM = Symbol('stream');
type TaggedResponse = ServerResponse & { [STREAM]?: ClientStream };
type TaggedSocket = Socket & { [STREAM]?: ClientStream };

function onResponseClose(this: TaggedResponse): void {
  this[STREAM]?.clientGone();
}

function onSocketDrain(this: TaggedSocket): void {
  this[STREAM]?.drained();
}

export class ClientStream implements Listener {
  readonly id: string;
  readonly account: string | null;
  readonly clientId: string;
  readonly channel: string | null;
  readonly receiveMask: number;
  readonly bridge: boolean;
  /** Epoch ms. */
  readonly openedAt = Date.now();
  /** KV ownership: the revision our claim was written at, and the newest foreign one seen. */
  claimKey: string | null = null;
  claimRevision = 0;
  foreignRevision = 0;
  closed = false;
  closeReason: CloseReason | null = null;
  /** Highest sequence queued; live frames at or below it are duplicates of a replay. */
  lastSeq = 0;

  private readonly res: ServerResponse;
  /** Frames go straight to the socket (see flush). */
  private readonly socket: Socket | null;
  private readonly scheduler: FlushScheduler;
  private readonly maxQueuedBytes: number;
  private readonly owner: StreamOwner;
  private readonly queue = new CoalescingQueue<Frame>();
  private blocked = false;
  private dirty = false;
  /** While a Last-Event-ID replay runs, live frames wait here. */
  private held: Frame[] | null = null;

  constructor(
    identity: StreamIdentity,
    res: ServerResponse,
    scheduler: FlushScheduler,
    maxQueuedBytes: number,
    owner: StreamOwner,
  ) {
    this.id = identity.id;
    this.account = identity.account;
    this.clientId = identity.clientId;
    this.channel = identity.channel;
    this.receiveMask = identity.receiveMask;
    this.bridge = identity.bridge;
    this.res = res;
    this.scheduler = scheduler;
    this.maxQueuedBytes = maxQueuedBytes;
    this.owner = owner;
    this.socket = res.socket;
    // The client left before the stream existed: it is born closed and nothing is registered.
    if (res.destroyed || this.socket === null || this.socket.destroyed) {
      this.closed = true;
      this.closeReason = CloseReason.ClientClosed;
      return;
    }
    (res as TaggedResponse)[STREAM] = this;
    res.on('close', onResponseClose);
    (this.socket as TaggedSocket)[STREAM] = this;
    this.socket.on('drain', onSocketDrain);
  }

  /** The connection closed under us (the client left, or the socket failed). */
  clientGone(): void {
    this.finish(CloseReason.ClientClosed);
  }

  /** The socket took what was waiting: write what queued meanwhile. */
  drained(): void {
    this.blocked = false;
    this.flush();
  }

  /** Queues a live frame the delivery rules let through (held back while a replay runs). */
  deliver(frame: Frame): void {
    if (this.held !== null) {
      if (!this.closed) this.held.push(frame);
      return;
    }
    this.enqueue(frame);
  }

  /** Queues a frame read from the log for this stream's replay. */
  deliverReplayed(frame: Frame): void {
    this.enqueue(frame);
  }

  private enqueue(frame: Frame): void {
    if (this.closed) return;
    if (frame.seq !== 0) {
      if (frame.seq <= this.lastSeq) return;
      this.lastSeq = frame.seq;
    }
    if (this.queue.push(frame)) this.scheduler.countCoalesced();
    // The bound is on what waits for a client that is not reading; a large burst in one turn to a
    // client that reads is written out at the next flush.
    if (this.blocked && this.queue.bytes > this.maxQueuedBytes) {
      this.close(CloseReason.SlowConsumer);
      return;
    }
    if (!this.blocked && !this.dirty) {
      this.dirty = true;
      this.scheduler.markDirty(this);
    }
  }

  /**
   * Writes everything queued in one write. Returns the number of pairs written. The body is
   * close-delimited and the headers went out when the stream opened, so frames are written to the
   * socket itself, skipping the response's write path (cork, a nextTick to uncork, bookkeeping):
   * about 5 % of the gateway's CPU under fanout in a profile, paid once per delivery.
   */
  flush(): number {
    this.dirty = false;
    if (this.closed || this.blocked || this.queue.length === 0) return 0;
    const socket = this.socket;
    // A socket gone without its close reported yet: end the stream here, once per turn rather than
    // on every delivery, so nothing queues for it past this turn.
    if (socket === null || socket.destroyed) {
      this.clientGone();
      return 0;
    }
    const pairs = this.queue.length;
    if (!socket.write(this.queue.take())) this.blocked = true;
    return pairs;
  }

  /** Writes raw bytes (comments, retry) outside the frame queue. */
  writeRaw(bytes: Buffer): void {
    if (!this.closed && !this.res.destroyed) this.res.write(bytes);
  }

  startHolding(): void {
    this.held = [];
  }

  /** Ends a replay: live frames that arrived meanwhile are delivered, skipping what the replay sent. */
  releaseHeld(): void {
    const held = this.held ?? [];
    this.held = null;
    for (const f of held) this.enqueue(f);
  }

  /**
   * Ends the stream with its close frames (what is queued goes out first). `retryMs` overrides the
   * catalogue's wait (a draining gateway spreads its clients out).
   */
  close(reason: CloseReasonCode, retryMs?: number): void {
    if (this.closed) return;
    // Not yet answered (closed while its claim was being written): the open path answers.
    if (!this.res.headersSent) {
      this.finish(reason);
      return;
    }
    if (!this.res.destroyed) {
      // What is queued goes out first, except to a slow consumer: it resumes with Last-Event-ID.
      if (reason !== CloseReason.SlowConsumer) {
        this.blocked = false;
        this.flush();
      }
      this.res.write(closeFrames(reason, retryMs));
    }
    this.finish(reason);
    this.res.end();
    if (reason === CloseReason.SlowConsumer) {
      // A client that never reads again would hold its socket (and what waits in it) for ever.
      const socket = this.socket;
      const timer = setTimeout(() => socket?.destroy(), SLOW_CLOSE_GRACE_MS).unref();
      this.res.once('close', () => clearTimeout(timer));
    }
  }

  private finish(reason: CloseReason): void {
    if (this.closed) return;
    this.closed = true;
    this.closeReason = reason;
    this.queue.clear();
    this.held = null;
    this.owner.streamClosed(this, reason);
  }
}
