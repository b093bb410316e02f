// A payload as the gateway fans it out: the few facts the delivery rules need (read from NATS
// headers, never from the body) and the SSE bytes, serialised once for every recipient.
//
// What the event log holds is written by ingresses, but a stolen ingress credential writes it too
// (docs/OPERATIONS.md "What a stolen credential can still do"): a stored message becomes a frame only
// when it has the shape an ingress gives it, so nothing stored can end a client's SSE event early
// (a raw line break would let it forge `event: close` or `retry:`), break the text rule in the meta
// frame, or name a channel other than the one it was stored on. Checked once per message, never per
// recipient.

import type { MsgHdrs } from '@nats-io/nats-core';
import { PLAYER_NAME_PATTERN } from '../../../schemas/common.js';
import type { MetaShape } from '../../../schemas/meta.js';
import { unsafeCharIn } from '../../../schemas/text.js';
import { normaliseUuid } from '../../../schemas/uuid.js';
import { channelFromToken, channelProblem, normaliseChannel } from '../../core/channel.js';
import { TYPE_BIT, typeBit } from '../../core/scopes.js';
import { CHANNEL_SUBJECT_PREFIX } from '../../core/subjects.js';
import { Header } from '../../core/wire-headers.js';
import type { LogPosition } from '../stream/log-position.js';
import { encodePair, metaJson } from '../stream/sse.js';

export interface Frame {
  /** Stream sequence; 0 for frames not in the log (server keepalives). */
  seq: number;
  typeBit: number;
  isMessage: boolean;
  isKeepalive: boolean;
  isPresence: boolean;
  sender: string;
  /** Addressee of a direct message. */
  to: string | null;
  /** Ingress publish time (epoch ms), for the delivery-lag metric; 0 when unknown. */
  publishedAt: number;
  bytes: Buffer;
  /** With regions: the region whose log `seq` is in. */
  region?: string;
  /** With regions: its group's position once it is delivered (what `bytes`' id says). */
  position?: LogPosition;
  /** With regions: the same frame with another id (a stream ahead of its group, stream/region-seen.ts). */
  withId?: (id: string) => Buffer;
}

/** With regions, where a frame is: its region, and the id its group gives it (the group's position). */
export interface RegionPlace {
  region: string;
  position: LogPosition;
  order: readonly string[];
}

const MESSAGE_BIT = typeBit('message');
const KEEPALIVE_BIT = typeBit('keepalive');
const PRESENCE_BIT = typeBit('presence');

/**
 * Builds the frame for one stored message; null when it is not what an ingress stores (never
 * delivered). `subject` is the one it was stored on (the log's, or RePublish's), which names its
 * channel. `shape` adds the published client's meta fields (META_AUTHORITATIVE_SENDER), the same for
 * every recipient, so the frame is still serialised once.
 */
export function frameFromMessage(
  headers: MsgHdrs | undefined,
  data: Uint8Array,
  seq: number,
  subject: string,
  shape: MetaShape = 'spec',
  place: RegionPlace | null = null,
): Frame | null {
  if (headers === undefined || !isOneJsonObject(data)) return null;
  const bit = TYPE_BIT.get(headers.get(Header.Type));
  const sender = headers.get(Header.Sender);
  const channel = channelOf(subject);
  if (bit === undefined || channel === null || !isUuid(sender)) return null;
  const agent = headers.has(Header.Agent) ? headers.get(Header.Agent) : null;
  const to = headers.has(Header.To) ? headers.get(Header.To) : null;
  if ((agent !== null && unsafeCharIn(agent) !== null) || (to !== null && !isUuid(to))) return null;
  const meta = metaJson(sender, agent, channel, shape, shape === 'spec' ? null : senderName(headers));
  const frame: Frame = {
    seq,
    typeBit: bit,
    isMessage: bit === MESSAGE_BIT,
    isKeepalive: bit === KEEPALIVE_BIT,
    isPresence: bit === PRESENCE_BIT,
    sender,
    to,
    publishedAt: Number(headers.get(Header.Time)) || 0,
    bytes: encodePair(meta, data, place === null ? seq : place.position.id(place.order)),
  };
  if (place !== null) {
    frame.region = place.region;
    frame.position = place.position;
    frame.withId = (id) => encodePair(meta, data, id);
  }
  return frame;
}

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/** One line of JSON object text, as JSON.stringify writes it: a raw CR or LF would end the SSE event. */
function isOneJsonObject(data: Uint8Array): boolean {
  return data.length >= 2 && data[0] === OPEN_BRACE && data[data.length - 1] === CLOSE_BRACE && data.indexOf(0x0a) === -1 && data.indexOf(0x0d) === -1;
}

function isUuid(value: string): boolean {
  return normaliseUuid(value) === value;
}

/** The readable channel of a stored subject, when it is one an ingress would write. */
function channelOf(subject: string): string | null {
  if (!subject.startsWith(CHANNEL_SUBJECT_PREFIX)) return null;
  const channel = channelFromToken(subject.slice(CHANNEL_SUBJECT_PREFIX.length));
  return channelProblem(channel) === null && normaliseChannel(channel) === channel ? channel : null;
}

/** The server's own keepalive pair for one channel (not stored, no id). */
export function keepaliveFrame(agent: string, channel: string, nilUuid: string, shape: MetaShape = 'spec'): Frame {
  return {
    seq: 0,
    typeBit: KEEPALIVE_BIT,
    isMessage: false,
    isKeepalive: true,
    isPresence: false,
    sender: nilUuid,
    to: null,
    publishedAt: 0,
    bytes: encodePair(metaJson(nilUuid, agent, channel, shape), '{"type":"keepalive"}', null),
  };
}

const PLAYER_NAME = new RegExp(PLAYER_NAME_PATTERN);

/** The sender's profile name, when the ingress stored one (read only for the published client's meta). */
function senderName(headers: MsgHdrs): string | null {
  const name = headers.has(Header.SenderName) ? headers.get(Header.SenderName) : null;
  return name !== null && PLAYER_NAME.test(name) ? name : null;
}
