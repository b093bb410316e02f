// One stream per (account, channel), seen from the clients: once a client of an account is
// confirmed open, another client of that account whose stream opened before it must not go on
// receiving frames. A fault that splits the mesh delays the eviction (a paused gateway hears of it
// when it wakes), so a frame counts against the rule only if it arrived more than `graceMs` after
// the later open and after every fault that was under way since that open had healed.

import type { Anomaly, ClientRecord, FaultWindow } from './records.js';

/** How long an eviction may take on a healed mesh: the notice crosses NATS once. */
export const EVICTION_GRACE_MS = 1000;

export interface StreamCounts {
  /** Accounts that had more than one client (second streams, reopens after an eviction). */
  contested: number;
  /** Opens that should have evicted another client's stream. */
  takeovers: number;
  /** Frames an older stream received after a newer one opened, within the grace or while a fault was on. */
  lateFrames: number;
}

export function checkStreams<Id>(clients: ReadonlyArray<ClientRecord<Id>>, faults: readonly FaultWindow[], graceMs = EVICTION_GRACE_MS): { counts: StreamCounts; anomalies: Anomaly[] } {
  const byAccount = new Map<string, Array<ClientRecord<Id>>>();
  for (const c of clients) {
    const key = `${c.account}\n${c.channel}`;
    const list = byAccount.get(key);
    if (list === undefined) byAccount.set(key, [c]);
    else list.push(c);
  }
  const counts: StreamCounts = { contested: 0, takeovers: 0, lateFrames: 0 };
  const anomalies: Anomaly[] = [];
  /** When every fault under way at some moment of [from, to] had healed. */
  const healedAfter = (from: number, to: number): number => Math.max(from, ...faults.filter((f) => f.start <= to && f.end >= from).map((f) => f.end));

  for (const group of byAccount.values()) {
    if (group.length < 2) continue;
    counts.contested++;
    for (const newer of group) {
      for (const open of newer.opens) {
        for (const older of group) {
          if (older === newer) continue;
          // Frames of the older client's stream of that time: after the open, before its own next open.
          const reopened = older.opens.find((o) => o.t >= open.t)?.t ?? Infinity;
          const late = older.frames.slice(firstAfter(older.frames, open.t), firstAfter(older.frames, reopened - 1));
          if (late.length === 0) continue;
          counts.takeovers++;
          const unexcused = late.filter((f) => f.t > healedAfter(open.t, f.t) + graceMs);
          counts.lateFrames += late.length - unexcused.length;
          if (unexcused.length === 0) continue;
          const first = unexcused[0]!;
          anomalies.push({
            class: 'double-stream',
            t: first.t,
            subjects: [newer.id, older.id],
            text:
              `${older.id} (opened ${lastOpenBefore(older, first.t)} ms on ${older.opens.at(-1)?.gateway ?? '?'}) received ${unexcused.length} frames ` +
              `(ids ${String(unexcused[0]!.id)}..${String(unexcused.at(-1)!.id)}) after ${newer.id} of the same account opened on ${open.gateway} at ${open.t} ms, ` +
              `the first ${first.t - healedAfter(open.t, first.t)} ms after the mesh healed`,
          });
        }
      }
    }
  }
  return { counts, anomalies };
}

/** Index of the first frame received after `t` (frames are in the order received). */
function firstAfter(frames: ReadonlyArray<{ t: number }>, t: number): number {
  let lo = 0;
  let hi = frames.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (frames[mid]!.t > t) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** When the client's stream that delivered a frame at `t` was confirmed open (-1: before any open). */
function lastOpenBefore<Id>(c: ClientRecord<Id>, t: number): number {
  let last = -1;
  for (const o of c.opens) if (o.t <= t) last = o.t;
  return last;
}
