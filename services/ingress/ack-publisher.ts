// Publishing to JetStream and awaiting the stream's acknowledgement, written for the ingress hot
// path. js.publish() works, but per message it creates a request object, a timer and (inside the
// client) an Error with a stack trace; at thousands of POSTs per second that was most of the
// ingress's CPU. Here every publish carries a reply subject under one inbox subscription, pending
// acknowledgements live in a map, and one coarse timer expires the late ones. Publishes of one
// event-loop turn are handed to the client together, so they leave in one socket write instead of
// one per POST (on this kind of machine most of the cost of a publish is the system call).

import { createInbox, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from '@nats-io/nats-core';
import { guarded, loggedThrows } from '../core/guarded-callback.js';
import type { Logger } from '../core/logger.js';

export interface StoredAck {
  stream: string;
  seq: number;
  duplicate: boolean;
}

/**
 * `not_stored`: JetStream (or the client) said no, so the message is not in the log. `unknown`: no
 * answer came in time, and the message may or may not have been stored.
 */
export type PublishOutcome = 'not_stored' | 'unknown';

export class PublishError extends Error {
  readonly outcome: PublishOutcome;
  constructor(message: string, outcome: PublishOutcome = 'not_stored') {
    super(message);
    this.name = 'PublishError';
    this.outcome = outcome;
  }
}

interface Outgoing {
  subject: string;
  data: string | Uint8Array;
  headers: MsgHdrs;
  reply: string;
  id: number;
}

interface Pending {
  resolve: (ack: StoredAck) => void;
  reject: (e: Error) => void;
  deadline: number;
}

const SWEEP_MS = 100;

/** What JetStream answered a publish: where it stored it, or why not. */
function readAck(msg: Msg): StoredAck | PublishError {
  if (msg.headers?.code === 503 || msg.data.length === 0) return new PublishError('no JetStream responder (the stream has no leader right now)');
  let body: { stream?: string; seq?: number; duplicate?: boolean; error?: { description?: string } };
  try {
    body = msg.json();
  } catch {
    return new PublishError('unreadable acknowledgement', 'unknown');
  }
  if (body.error !== undefined) return new PublishError(body.error.description ?? 'refused by JetStream');
  if (body.stream === undefined || body.seq === undefined) return new PublishError('invalid acknowledgement', 'unknown');
  return { stream: body.stream, seq: body.seq, duplicate: body.duplicate === true };
}
/** How long an expired publish's id is remembered, so that its late acknowledgement is told from a repeated one. */
const LATE_ACK_MEMORY_MS = 60_000;

export class AckPublisher {
  private readonly nc: NatsConnection;
  private readonly prefix: string;
  private readonly sub: Subscription;
  private readonly pending = new Map<number, Pending>();
  /** Ids of publishes that expired unanswered, with when: an acknowledgement may still come for them. */
  private readonly expired = new Map<number, number>();
  private readonly onRepeatedAck: (again: StoredAck) => void;
  private readonly sweeper: NodeJS.Timeout;
  private next = 0;
  private outgoing: Outgoing[] = [];

  /**
   * `inbox`: the connection's inbox prefix, the only one its role may subscribe under.
   * `onRepeatedAck`: called with the second answer to a publish already answered. Each publish goes
   * out once with its own reply subject, so a second answer means the message reached the stream
   * twice: stored again, or caught by the duplicate window (`duplicate`, with a Nats-Msg-Id only).
   */
  constructor(nc: NatsConnection, inbox: string, logger: Pick<Logger, 'warn'>, onRepeatedAck: (again: StoredAck) => void = () => undefined) {
    this.nc = nc;
    this.onRepeatedAck = onRepeatedAck;
    this.prefix = `${createInbox(inbox)}.`;
    this.sub = nc.subscribe(`${this.prefix}*`, {
      callback: guarded((err, msg) => {
        if (err !== null) return;
        const id = Number(msg.subject.slice(this.prefix.length));
        const p = this.pending.get(id);
        const ack = readAck(msg);
        if (p === undefined) {
          // Late (its publish expired) or repeated: ids are never reused, nothing else answers here.
          if (!this.expired.delete(id) && Number.isInteger(id) && id < this.next && !(ack instanceof PublishError)) this.onRepeatedAck(ack);
          return;
        }
        this.pending.delete(id);
        if (ack instanceof PublishError) p.reject(ack);
        else p.resolve(ack);
      }, loggedThrows(logger, 'reading a publish acknowledgement')),
    });
    this.sweeper = setInterval(() => this.expire(), SWEEP_MS);
    this.sweeper.unref();
  }

  /** Resolves once the stream has stored the message; rejects on refusal or after `timeoutMs`. */
  publish(subject: string, data: string | Uint8Array, headers: MsgHdrs, timeoutMs: number): Promise<StoredAck> {
    const id = this.next++;
    return new Promise<StoredAck>((resolve, reject) => {
      this.pending.set(id, { resolve, reject, deadline: Date.now() + timeoutMs });
      if (this.outgoing.length === 0) setImmediate(() => this.send());
      // Order is kept: a batch's entries are queued, and later sent, in the order given.
      this.outgoing.push({ subject, data, headers, reply: this.prefix + id, id });
    });
  }

  private send(): void {
    const batch = this.outgoing;
    this.outgoing = [];
    for (const o of batch) {
      try {
        this.nc.publish(o.subject, o.data, { reply: o.reply, headers: o.headers });
      } catch (e) {
        const p = this.pending.get(o.id);
        this.pending.delete(o.id);
        p?.reject(e instanceof Error ? e : new PublishError(String(e)));
      }
    }
  }

  private expire(): void {
    const now = Date.now();
    for (const [id, p] of this.pending) {
      if (p.deadline <= now) {
        this.pending.delete(id);
        this.expired.set(id, now);
        p.reject(new PublishError('the event log did not acknowledge in time', 'unknown'));
      }
    }
    for (const [id, at] of this.expired) {
      if (at > now - LATE_ACK_MEMORY_MS) break; // in order of expiry
      this.expired.delete(id);
    }
  }

  close(): void {
    clearInterval(this.sweeper);
    this.sub.unsubscribe();
    for (const p of this.pending.values()) p.reject(new PublishError('publisher closed before the acknowledgement', 'unknown'));
    this.pending.clear();
  }
}
