// MAX_STREAMS_PER_ACCOUNT and MAX_STREAMS_PER_KEY, counted across the mesh: the claims other nodes
// hold (from the ownership bucket) plus this node's own streams, opening ones included, so a burst
// of opens on one node cannot slip past while its claims are being written.

import { RelayError } from '../core/errors.js';
import type { StreamIdentity } from './client-stream.js';
import { streamClaimKey, streamOwner, type Ownership } from './ownership.js';
import type { StreamRegistry } from './stream-registry.js';

/** Retry-After on too_many_streams: streams close and free a place at any time. */
const TOO_MANY_RETRY_SECONDS = 10;

export interface StreamCaps {
  /** 0: no cap. */
  maxStreamsPerAccount: number;
  maxStreamsPerKey: number;
}

/** Throws 429 too_many_streams when the stream would exceed its owner's cap. */
export function checkStreamCaps(
  s: Pick<StreamIdentity, 'id' | 'account' | 'clientId' | 'channel'>,
  caps: StreamCaps,
  node: Pick<StreamRegistry, 'ofOwner'>,
  mesh: Pick<Ownership, 'heldElsewhere' | 'remoteStreams'>,
): void {
  const limit = s.account !== null ? caps.maxStreamsPerAccount : caps.maxStreamsPerKey;
  if (limit === 0) return;
  const owner = streamOwner(s);
  const local = node.ofOwner(owner);
  // A stream on a channel the account already holds replaces that one (eviction): it adds nothing.
  const replacing = s.account !== null && s.channel !== null && (mesh.heldElsewhere(streamClaimKey(s)) || local.some((x) => x.channel === s.channel));
  const held = mesh.remoteStreams(owner) + local.length - (replacing ? 1 : 0);
  if (held < limit) return;
  const whose = s.account !== null ? 'This account' : 'This API key (without a session)';
  throw new RelayError('too_many_streams', `${whose} already holds ${held} streams across the mesh, the most allowed; close one first.`, {
    retryAfter: TOO_MANY_RETRY_SECONDS,
    extra: { limit },
  });
}
