// The server's keepalive pair, spread over the interval: every channel group belongs to one of
// KEEPALIVE_SLICES slices (a hash of its key, so always the same one) and one slice is sent per tick
// of KEEPALIVE_INTERVAL / KEEPALIVE_SLICES, one shared frame per group. Each stream still gets its
// pair every interval; the gateway no longer writes to every stream in one burst, which at 100,000
// streams on a machine held up live frames behind it (docs/BENCHMARKS.md, scale).

import { NIL_UUID } from '../../../schemas/uuid.js';
import { RELAY_AGENT } from '../../core/version.js';
import type { ChannelHub } from './channel-hub.js';
import { keepaliveFrame } from './frame.js';

export const KEEPALIVE_SLICES = 10;

/** FNV-1a of the group key, reduced to a slice. */
export function keepaliveSlice(key: string, slices = KEEPALIVE_SLICES): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % slices;
}

export class Keepalives {
  private readonly hub: ChannelHub;
  private readonly intervalMs: number;
  private timer: NodeJS.Timeout | undefined;
  private tick = 0;

  constructor(hub: ChannelHub, intervalMs: number) {
    this.hub = hub;
    this.intervalMs = intervalMs;
  }

  start(): void {
    this.timer = setInterval(() => this.send(), this.intervalMs / KEEPALIVE_SLICES);
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
  }

  /** One slice of the channel groups per tick; one shared frame per group. */
  private send(): void {
    const slice = this.tick++ % KEEPALIVE_SLICES;
    for (const key of this.hub.groupKeys()) {
      if (keepaliveSlice(key) !== slice) continue;
      this.hub.broadcast(key, keepaliveFrame(RELAY_AGENT, key, NIL_UUID, this.hub.metaShape));
    }
  }
}
