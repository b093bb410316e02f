// Who hears what (DESIGN.md section 3), for one stream S of account A with receive mask R (fixed at
// connect) and bridge flag B. Channel matching is done before this, by subscription.

import type { Frame } from './frame.js';

export interface Listener {
  /** The account behind the stream; null for a bridge without a session. */
  readonly account: string | null;
  readonly receiveMask: number;
  /** The key holds irc.connection.unauthenticated: hears direct messages to anyone. */
  readonly bridge: boolean;
}

export function hears(s: Listener, f: Frame): boolean {
  // Direct messages: to their addressee (or a bridge), and only if R covers `message`. The sender
  // does not get its own DM back unless it is addressed to itself.
  if (f.isMessage) return (f.to === s.account || s.bridge) && (s.receiveMask & f.typeBit) !== 0;
  // The account's own frames (scope irc.connection.establish, which every open stream has).
  if (f.sender === s.account) return true;
  if (f.isKeepalive) return s.receiveMask !== 0;
  return (s.receiveMask & f.typeBit) !== 0;
}
