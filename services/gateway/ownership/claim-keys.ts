// The claim of a stream: its key in KV relay-streams, and the record written. (Whom it counts
// against is core/owner.ts: the ingress and admission count by the same name.)

import type { StreamClaim } from '../../../schemas/records.js';
import { channelToken } from '../../core/channel.js';

export function claimKey(account: string, channel: string): string {
  return `${account}.${channelToken(channel)}`;
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

/** Where a stream's own key (one no other stream shares) starts. */
const SOLO_PREFIX = 'solo.';

/** The claim key of a stream: shared by every stream of one (account, channel), else its own. */
export function streamClaimKey(s: Pick<ClaimedStream, 'account' | 'channel' | 'id'>): string {
  return s.account !== null && s.channel !== null ? claimKey(s.account, s.channel) : `${SOLO_PREFIX}${s.id}`;
}

/** Whether the key is a stream's own: new when its stream opens, and never claimed by another. */
export function isSoloKey(key: string): boolean {
  return key.startsWith(SOLO_PREFIX);
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
