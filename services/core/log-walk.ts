// Reading a range of one subject filter of a stream without a consumer: one STREAM.MSG.GET after
// another, each answered by the stream's leader (when leader gets are refused, a region's own
// streams by direct gets: getOne). The gateway reads the log (replay, gap fill, catch-up) and the
// claim index this way because its NATS account may not create consumers: a
// consumer's deliver subject is interpreted in the JetStream account, so a stolen gateway credential
// could aim deliveries at the JetStream API itself. The admin service and the CLI, which keep that
// right, read on consumers (log-reader.ts).

import type { JetStreamManager, LastForMsgRequest, NextMsgRequest, SeqMsgRequest, StoredMsg } from '@nats-io/jetstream';
import { isMetaRefusal } from './jetstream-errors.js';
import { TimeoutError, type MsgHdrs } from '@nats-io/nats-core';
import { LogStalledError } from './log-reader.js';

/** A read that gets no answer for this long is abandoned (as log-reader.ts's: a node died under it). */
const STALL_MS = 10_000;
/** Gets in flight at once where every message of the stream matches (the whole log). */
const WINDOW = 64;

export interface LogWalk {
  stream: string;
  /** Subject filter: one channel, one node's claim index subject, or every subject of the stream. */
  filter: string;
  /** First sequence read; one below the oldest kept starts at the oldest. */
  fromSeq: number;
  /** Last sequence read (inclusive); null (default) reads until no message is left. */
  untilSeq?: number | null;
  /**
   * Every message of the stream matches `filter` (the whole log): a bounded range is then read a
   * window of gets by sequence at a time rather than one get after another. `untilSeq` must name a
   * sequence the stream has assigned already (replay's end: the stream's last sequence), so a
   * sequence that answers "no message" below it was deleted, never one still to come.
   */
  everySubject?: boolean;
  /** Tests shorten it. */
  stallMs?: number;
  /** A stream of this region (a region's own log or copy): read from a replica when cut off (getOne). */
  local?: boolean;
}

/** One stored message, its payload decoded once (StoredMsg decodes it again on every read). */
export interface WalkedMsg {
  seq: number;
  subject: string;
  /** Empty when the message was stored without headers. */
  headers: MsgHdrs;
  data: Uint8Array;
}

/** STREAM.MSG.GET by `next_by_subj` (nats-server 2.9+); nats.js types its query as `{seq}` or `{last_by_subj}` only, and sends any query as it is. */
type NextBySubject = SeqMsgRequest & NextMsgRequest;

/**
 * Reads a range in order, calling `onMessage` for each message; stops early when it returns false.
 * Returns how many messages it was called for (not counting one it stopped at), as readRange does.
 * Throws LogStalledError when the leader does not answer for STALL_MS; other JetStream errors as they come.
 */
export async function walkLog(jsm: JetStreamManager, walk: LogWalk, onMessage: (m: WalkedMsg) => boolean | void): Promise<number> {
  const { filter, untilSeq = null } = walk;
  const getter = new Getter(jsm, walk);
  let seq = Math.max(1, walk.fromSeq);
  let count = 0;
  while (untilSeq === null || seq <= untilSeq) {
    // The next message of the filter, over any hole (deleted, expired, other subjects) in one request.
    const next: NextBySubject = { seq, next_by_subj: filter };
    const first = await getter.get(next, count);
    if (first === null || (untilSeq !== null && first.seq > untilSeq)) break;
    let batch = [first];
    seq = first.seq + 1;
    if (walk.everySubject === true && untilSeq !== null && seq <= untilSeq) {
      const last = Math.min(untilSeq, first.seq + WINDOW - 1);
      const gets: Promise<WalkedMsg | null>[] = [];
      for (let s = seq; s <= last; s++) gets.push(getter.get({ seq: s }, count));
      // A sequence that answers "no message" was deleted; Promise.all waits on (and handles) every get.
      const rest = (await Promise.all(gets)).filter((m): m is WalkedMsg => m !== null);
      batch = batch.concat(rest);
      // Holes at the end of the window are left to the next `next_by_subj`, which steps over them.
      seq = batch[batch.length - 1]!.seq + 1;
    }
    for (const m of batch) {
      if (onMessage(m) === false) return count;
      count++;
    }
  }
  return count;
}

/** The newest sequence stored on `filter` (wildcards allowed), 0 when none: one get from the leader (or, cut off, a replica). */
export async function newestOn(jsm: JetStreamManager, stream: string, filter: string, local = false): Promise<number> {
  return (await getOne(jsm, stream, { last_by_subj: filter }, local))?.seq ?? 0;
}

/**
 * One message from the stream's leader. A region cut off from the others (docs/REGIONS.md) refuses
 * leader gets once JetStream's meta group has had no leader for a while, but still answers direct
 * gets, which a replica serves: a `local` stream (this region's log or copy, which allow them) is
 * then read from one, which may lag its leader by what it has not yet been sent. Not another
 * region's log: this region's copy would answer for it (nats-server lets a mirror answer direct
 * gets for its origin), and a region's silence is what tells a gateway its link is down.
 */
async function getOne(jsm: JetStreamManager, stream: string, query: SeqMsgRequest | LastForMsgRequest | NextBySubject, local: boolean): Promise<StoredMsg | null> {
  try {
    return await jsm.streams.getMessage(stream, query);
  } catch (err) {
    if (!local || !isMetaRefusal(err)) throw err;
    return jsm.direct.getMessage(stream, query);
  }
}

class Getter {
  private readonly stallMs: number;
  private progress = Date.now();

  constructor(
    private readonly jsm: JetStreamManager,
    private readonly walk: LogWalk,
  ) {
    this.stallMs = walk.stallMs ?? STALL_MS;
  }

  /** One message, or null when there is none; a get left unanswered is asked again until the read stalls. */
  async get(query: SeqMsgRequest | NextBySubject, read: number): Promise<WalkedMsg | null> {
    for (;;) {
      let m: StoredMsg | null;
      try {
        m = await getOne(this.jsm, this.walk.stream, query, this.walk.local === true);
      } catch (err) {
        // "No message" (deleted, below the oldest kept, none left) is null already, not an error.
        if (!(err instanceof TimeoutError)) throw err;
        // No leader answered (one being elected, a node gone): ask again while it has not been too long.
        if (Date.now() - this.progress >= this.stallMs) throw Object.assign(new LogStalledError(this.walk.filter, read), { cause: err });
        continue;
      }
      this.progress = Date.now();
      return m === null ? null : { seq: m.seq, subject: m.subject, headers: m.header, data: m.data };
    }
  }
}
