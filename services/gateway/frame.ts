// A payload as the gateway fans it out: the few facts the delivery rules need (read from NATS
// headers, never from the body) and the SSE bytes, serialised once for every recipient.

import type { MsgHdrs } from '@nats-io/nats-core';
import { TYPE_INDEX } from '../core/scopes.js';
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

const MESSAGE_BIT = 1 << TYPE_INDEX.get('message')!;
const KEEPALIVE_BIT = 1 << TYPE_INDEX.get('keepalive')!;
const PRESENCE_BIT = 1 << TYPE_INDEX.get('presence')!;

/** Builds the frame for one stored message; null when its headers are not ours (never delivered). */
export function frameFromMessage(headers: MsgHdrs | undefined, data: Uint8Array, seq: number): Frame | null {
  if (headers === undefined) return null;
  const type = headers.get(Header.Type);
  const index = TYPE_INDEX.get(type);
  const sender = headers.get(Header.Sender);
  const channel = headers.get(Header.Channel);
  if (index === undefined || sender === '' || channel === '') return null;
  const agent = headers.has(Header.Agent) ? headers.get(Header.Agent) : null;
  const to = headers.has(Header.To) ? headers.get(Header.To) : null;
  const typeBit = 1 << index;
  return {
    seq,
    typeBit,
    isMessage: typeBit === MESSAGE_BIT,
    isKeepalive: typeBit === KEEPALIVE_BIT,
    isPresence: typeBit === PRESENCE_BIT,
    sender,
    to,
    publishedAt: Number(headers.get(Header.Time)) || 0,
    bytes: encodePair(metaJson(sender, agent, channel), data, seq),
  };
}

/** The server's own keepalive pair for one channel (not stored, no id). */
export function keepaliveFrame(agent: string, channel: string, nilUuid: string): Frame {
  return {
    seq: 0,
    typeBit: KEEPALIVE_BIT,
    isMessage: false,
    isKeepalive: true,
    isPresence: false,
    sender: nilUuid,
    to: null,
    publishedAt: 0,
    bytes: encodePair(metaJson(nilUuid, agent, channel), '{"type":"keepalive"}', null),
  };
}
