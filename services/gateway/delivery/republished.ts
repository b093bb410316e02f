// What JetStream's RePublish says of a live message: its sequence, the previous one on its subject,
// and the subject it was stored on. Two things are not taken at face value, since any role may
// store a message with headers of its own choosing or create a consumer:
// - a publisher's own Nats-Sequence (and its kin) stays in the stored message, and RePublish appends
//   the server's after it (nats-server 2.9), so only the last value of each header is the server's;
// - a consumer may be told to deliver to live.channel.> (the server does not check a deliver
//   subject against its creator's permissions), but what a consumer delivers carries a reply
//   subject for its acknowledgement, which a RePublish never does;
// - an answer a role has JetStream aim at a live subject (a direct get's reply subject set to
//   live.channel.<b>) carries the server's headers of the message it really read: it counts only
//   when it was stored on the very channel whose live subject it came on (then it is one of that
//   channel's own frames, at its own sequence, which the group drops as already seen).

import type { Msg, MsgHdrs } from '@nats-io/nats-core';
import { Header, lastHeader } from '../../core/wire-headers.js';
import { LIVE_PREFIX } from '../../core/subjects.js';

export interface Republished {
  headers: MsgHdrs;
  seq: number;
  /** The previous sequence on its subject (0: none). */
  previous: number;
  /** The subject it was stored on (channel.<token>). */
  subject: string;
}

/** The RePublish facts of a live message, or null when it did not come from RePublish. */
export function republished(msg: Msg): Republished | null {
  const headers = msg.headers;
  if (headers === undefined || (msg.reply !== undefined && msg.reply !== '')) return null;
  const seq = Number(lastHeader(headers, Header.Sequence));
  const previous = Number(lastHeader(headers, Header.LastSequence));
  const subject = lastHeader(headers, Header.Subject);
  if (!Number.isSafeInteger(seq) || seq <= 0 || !Number.isSafeInteger(previous) || previous < 0 || previous >= seq || subject === '') return null;
  if (msg.subject !== LIVE_PREFIX + subject) return null;
  return { headers, seq, previous, subject };
}
