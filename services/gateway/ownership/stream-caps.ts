// MAX_STREAMS_PER_ACCOUNT and MAX_STREAMS_PER_KEY, counted across the mesh: the streams other nodes
// hold for the owner (asked of them at open: owner-census.ts) plus this node's own streams, opening
// ones included, so a burst of opens on one node cannot slip past while its claims are being
// written. The census is awaited first; the count and the registration that follows run in one
// turn of the event loop.

import { RelayError } from '../../core/errors.js';
import { ownerOf } from '../../core/owner.js';
import type { OwnerCensus, RemoteHoldings } from './owner-census.js';

/** Retry-After on too_many_streams: streams close and free a place at any time. */
const TOO_MANY_RETRY_SECONDS = 10;

export interface StreamCaps {
  /** 0: no cap. */
  maxStreamsPerAccount: number;
  maxStreamsPerKey: number;
}

/** This node's streams (opening ones included), by owner: the gateway's registry. */
export interface LocalStreams {
  ofOwner(owner: string): ReadonlyArray<{ readonly channel: string | null }>;
}

/** What the caps need of a stream. */
export interface CappedStream {
  readonly id: string;
  readonly account: string | null;
  readonly clientId: string;
  readonly channel: string | null;
}

function limitOf(s: CappedStream, caps: StreamCaps): number {
  return s.account !== null ? caps.maxStreamsPerAccount : caps.maxStreamsPerKey;
}

/** What other nodes hold for the stream's owner; nobody is asked when there is no cap. */
export async function remoteHoldings(s: CappedStream, caps: StreamCaps, census: Pick<OwnerCensus, 'remote'>): Promise<RemoteHoldings> {
  if (limitOf(s, caps) === 0) return { count: 0, holdsKey: false };
  // A stream without a session has its own key: nobody else holds it.
  return census.remote(ownerOf(s), s.account !== null ? s.channel : null);
}

/** Throws 429 too_many_streams when the stream would exceed its owner's cap. */
export function checkStreamCaps(s: CappedStream, caps: StreamCaps, node: LocalStreams, remote: RemoteHoldings): void {
  const limit = limitOf(s, caps);
  if (limit === 0) return;
  const local = node.ofOwner(ownerOf(s));
  // A stream on a channel the account already holds replaces that one (eviction): it adds nothing.
  const replacing = s.account !== null && s.channel !== null && (remote.holdsKey || local.some((x) => x.channel === s.channel));
  const held = remote.count + local.length - (replacing ? 1 : 0);
  if (held < limit) return;
  const whose = s.account !== null ? 'This account' : 'This API key (without a session)';
  throw new RelayError('too_many_streams', `${whose} already holds ${held} streams across the mesh, the most allowed; close one first.`, {
    retryAfter: TOO_MANY_RETRY_SECONDS,
    extra: { limit },
  });
}
