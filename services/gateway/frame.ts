// A payload as the gateway fans it out: the few facts the delivery rules need (read from NATS
// headers, never from the body) and the SSE bytes, serialised once for every recipient.

import type { MsgHdrs } from '@nats-io/nats-core';
import type { MetaShape } from '../../schemas/meta.js';
import { TYPE_BIT, typeBit } from '../core/scopes.js';
import { Header } from '../core/wire-headers.js';
import { encodePair, metaJson } from './sse.js';

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
}

const MESSAGE_BIT = typeBit('message');
const KEEPALIVE_BIT = typeBit('keepalive');
const PRESENCE_BIT = typeBit('presence');

/**
 * Builds the frame for one stored message; null when its headers are not ours (never delivered).
 * `shape` adds the published client's meta fields (META_AUTHORITATIVE_SENDER), the same for every
 * recipient, so the frame is still serialised once.
 */
export function frameFromMessage(headers: MsgHdrs | undefined, data: Uint8Array, seq: number, shape: MetaShape = 'spec'): Frame | null {
  if (headers === undefined) return null;
  const type = headers.get(Header.Type);
  const bit = TYPE_BIT.get(type);
  const sender = headers.get(Header.Sender);
  const channel = headers.get(Header.Channel);
  if (bit === undefined || sender === '' || channel === '') return null;
  const agent = headers.has(Header.Agent) ? headers.get(Header.Agent) : null;
  const to = headers.has(Header.To) ? headers.get(Header.To) : null;
  return {
    seq,
    typeBit: bit,
    isMessage: bit === MESSAGE_BIT,
    isKeepalive: bit === KEEPALIVE_BIT,
    isPresence: bit === PRESENCE_BIT,
    sender,
    to,
    publishedAt: Number(headers.get(Header.Time)) || 0,
    bytes: encodePair(metaJson(sender, agent, channel, shape, shape === 'spec' ? null : senderName(headers)), data, seq),
  };
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

/** The sender's profile name, when the ingress stored one (read only for the published client's meta). */
function senderName(headers: MsgHdrs): string | null {
  return headers.has(Header.SenderName) ? headers.get(Header.SenderName) : null;
}
