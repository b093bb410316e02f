// Request and reply over NATS, written for the hot paths (the ingress's publishes, a gateway's claim
// reads and writes). nc.request() works, but per request it creates a request object, a timer, and
// (inside the client, whatever noAsyncTraces says) an Error with a stack trace once the answer is in:
// at thousands of requests per second that is a large share of a process's CPU. Here every request
// carries a reply subject under one inbox subscription, pending requests live in a map, and one
// coarse timer expires the late ones. Requests of one event-loop turn are handed to the client
// together, so they leave in one socket write instead of one each (on this kind of machine most of
// the cost of a request is the system call).

import { createInbox, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from '@nats-io/nats-core';
import { guarded, loggedThrows } from './guarded-callback.js';
import type { Logger } from './logger.js';

/**
 * Why a request has no answer: none came in time (`timeout`: it may have been acted on), or the
 * replies were closed first (`closed`: by the process, or with the connection), or closed before it
 * was sent (`not_sent`).
 */
export class ReplyMissing extends Error {
  readonly code: 'timeout' | 'closed' | 'not_sent';
  constructor(code: 'timeout' | 'closed' | 'not_sent') {
    super(code === 'timeout' ? 'no answer came in time' : code === 'closed' ? 'closed before the answer came' : 'closed before the request was sent');
    this.name = 'ReplyMissing';
    this.code = code;
  }
}

interface Outgoing {
  subject: string;
  data: string | Uint8Array;
  headers: MsgHdrs | undefined;
  id: number;
}

interface Pending {
  resolve: (msg: Msg) => void;
  reject: (e: Error) => void;
  deadline: number;
}

const SWEEP_MS = 100;
/** A request's id as its reply subject's last token carries it: decimal digits, no leading zero, so no other spelling names it. */
const ID = /^(?:0|[1-9]\d{0,14})$/;
/** How long an expired request's id is remembered, so that its late answer is told from a repeated one. */
const LATE_REPLY_MEMORY_MS = 60_000;

export class NatsReplies {
  private readonly nc: NatsConnection;
  private readonly prefix: string;
  private readonly sub: Subscription;
  private readonly pending = new Map<number, Pending>();
  /** Ids of requests that expired unanswered, with when: an answer may still come for them. */
  private readonly expired = new Map<number, number>();
  private readonly onRepeated: ((again: Msg) => void) | undefined;
  private readonly sweeper: NodeJS.Timeout;
  private next = 0;
  private outgoing: Outgoing[] = [];
  private closed = false;

  /**
   * `inbox`: the connection's inbox prefix, the only one its role may subscribe under. `reading`:
   * what the answers are, for the warning when handling one throws (`reading an answer about a claim`).
   * `onRepeated`: called with a second answer to a request already answered (each request goes out
   * once with its own reply subject, so the responder answered it twice); late answers to expired
   * requests are dropped. Without it, neither is looked for.
   */
  constructor(nc: NatsConnection, inbox: string, logger: Pick<Logger, 'warn'>, reading: string, onRepeated?: (again: Msg) => void) {
    this.nc = nc;
    this.onRepeated = onRepeated;
    this.prefix = `${createInbox(inbox)}.`;
    this.sub = nc.subscribe(`${this.prefix}*`, {
      callback: guarded((err, msg) => {
        if (err !== null) {
          // The subscription itself was refused (a permission): no answer will come to any request.
          logger.warn({ err }, `${reading}: the answers' subscription failed`);
          this.close(err);
          return;
        }
        const token = msg.subject.slice(this.prefix.length);
        const id = ID.test(token) ? Number(token) : -1;
        const p = this.pending.get(id);
        if (p === undefined) {
          // Late (its request expired) or repeated: ids are never reused, nothing else answers here.
          if (this.onRepeated !== undefined && !this.expired.delete(id) && id >= 0 && id < this.next) this.onRepeated(msg);
          return;
        }
        this.pending.delete(id);
        p.resolve(msg);
      }, loggedThrows(logger, reading)),
    });
    // The connection closed: nothing pending will be answered.
    void this.sub.closed.then(() => this.close());
    this.sweeper = setInterval(() => this.expire(), SWEEP_MS);
    this.sweeper.unref();
  }

  /**
   * Resolves with the first answer (a no-responders status included: the caller reads it); rejects
   * with ReplyMissing after `timeoutMs` or at close, or with the client's error when it cannot send.
   */
  request(subject: string, data: string | Uint8Array, headers: MsgHdrs | undefined, timeoutMs: number): Promise<Msg> {
    if (this.closed) return Promise.reject(new ReplyMissing('not_sent'));
    const id = this.next++;
    return new Promise<Msg>((resolve, reject) => {
      this.pending.set(id, { resolve, reject, deadline: Date.now() + timeoutMs });
      if (this.outgoing.length === 0) setImmediate(() => this.send());
      // Order is kept: requests are sent in the order they were made.
      this.outgoing.push({ subject, data, headers, id });
    });
  }

  private send(): void {
    const batch = this.outgoing;
    this.outgoing = [];
    for (const o of batch) {
      try {
        this.nc.publish(o.subject, o.data, o.headers === undefined ? { reply: this.prefix + o.id } : { reply: this.prefix + o.id, headers: o.headers });
      } catch (e) {
        const p = this.pending.get(o.id);
        this.pending.delete(o.id);
        p?.reject(e instanceof Error ? e : new Error(String(e)));
      }
    }
  }

  private expire(): void {
    const now = Date.now();
    for (const [id, p] of this.pending) {
      if (p.deadline <= now) {
        this.pending.delete(id);
        if (this.onRepeated !== undefined) this.expired.set(id, now);
        p.reject(new ReplyMissing('timeout'));
      }
    }
    for (const [id, at] of this.expired) {
      if (at > now - LATE_REPLY_MEMORY_MS) break; // in order of expiry
      this.expired.delete(id);
    }
  }

  /** Rejects what is pending (`err`, or ReplyMissing): requests not sent yet are dropped, unsent. */
  close(err?: Error): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.sweeper);
    if (!this.sub.isClosed()) this.sub.unsubscribe();
    for (const o of this.outgoing) {
      this.pending.get(o.id)?.reject(err ?? new ReplyMissing('not_sent'));
      this.pending.delete(o.id);
    }
    this.outgoing = [];
    for (const p of this.pending.values()) p.reject(err ?? new ReplyMissing('closed'));
    this.pending.clear();
  }
}
