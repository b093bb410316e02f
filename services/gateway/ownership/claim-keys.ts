// The claim of a stream: its key in KV relay-streams, whom it counts against, and the record written.

import type { StreamClaim } from '../../../schemas/records.js';
import { channelToken } from '../../core/channel.js';

export function claimKey(account: string, channel: string): string {
  return `${account}.${channelToken(channel)}`;
}

/** Every claim key of one account, as a subject wildcard (what a gateway listens to for it). */
export function accountClaimKeys(account: string): string {
  return `${account}.>`;
}

/** What a claim says of the stream behind it. */
export interface ClaimedStream {
  readonly id: string;
  readonly account: string | null;
  readonly clientId: string;
  readonly channel: string | null;
  readonly agent?: string | null;
  /** Epoch ms. */
  readonly openedAt: number;
}

/** The claim key of a stream: shared by every stream of one (account, channel), else its own. */
export function streamClaimKey(s: Pick<ClaimedStream, 'account' | 'channel' | 'id'>): string {
  return s.account !== null && s.channel !== null ? claimKey(s.account, s.channel) : `solo.${s.id}`;
}

/** Whom a stream counts against: its account, or for a stream without a session its key. */
export function streamOwner(s: Pick<ClaimedStream, 'account' | 'clientId'>): string {
  return s.account ?? `key:${s.clientId}`;
}

/** The record a node writes for one of its streams. */
export function claimRecord(nodeId: string, stream: ClaimedStream): StreamClaim {
  return {
    node: nodeId,
    conn: stream.id,
    uuid: stream.account,
    channel: stream.channel,
    clientId: stream.clientId,
    openedAt: new Date(stream.openedAt).toISOString(),
    ...(stream.agent != null ? { agent: stream.agent } : {}),
  };
}
