// Where a channel group or a stream is in the logs it hears: per region, the last sequence delivered,
// every earlier one of that region (on the channel) included. Without regions there is one log and
// its key is ''. A stream's `id:` is its own position (schemas/event-id.ts), which is why a client
// can resume at any gateway of any region: each region's sequences are the same everywhere (a copy
// of a log keeps its origin's numbers, docs/REGIONS.md).
//
// A stream's position starts at its Last-Event-ID (or its group's, when it has none) and moves only
// with a frame it is sent: a resume sends what it lacks of its group region by region, reading copies
// of the logs that may lag the live feed (the gateway waits for them), so the id never claims a frame
// that was not sent. The caller feeds frames of one region in that region's order (a gap filled
// before what follows it); frames of different regions may interleave in any way. A bridge, hearing
// every channel, finds a gap per subject, so a gap filled after a later frame of another subject of
// the same region is behind its position and skipped for it (docs/REGIONS.md, known limits).

import { formatEventId, type EventPosition } from '../../../schemas/event-id.js';

/** The region key of a mesh without regions: its one log. */
export const ONE_LOG = '';

/** What a resume must read of one region's log: after `after`, up to and with `until`. */
export interface ReplayRange {
  region: string;
  after: number;
  until: number;
}

export class LogPosition {
  private readonly seqs: Map<string, number>;

  constructor(seqs: Iterable<readonly [string, number]> = []) {
    this.seqs = new Map(seqs);
  }

  /** The position a client's Last-Event-ID names. */
  static of(position: EventPosition): LogPosition {
    return position.kind === 'single' ? new LogPosition([[ONE_LOG, position.seq]]) : new LogPosition(position.seqs);
  }

  get(region: string): number {
    return this.seqs.get(region) ?? 0;
  }

  /**
   * A frame of `region` at `seq` is delivered: the position moves to it. False when the position
   * already holds it (a frame the client had, from a gateway ahead of this one): not to be sent.
   */
  advance(region: string, seq: number): boolean {
    if (seq <= this.get(region)) return false;
    this.seqs.set(region, seq);
    return true;
  }

  /** What a stream at this position lacks of `target`, region by region (the mesh's order first). */
  lacks(target: LogPosition, regionOrder: readonly string[] = []): ReplayRange[] {
    const regions = [...new Set([...regionOrder, ...[...target.seqs.keys()].sort()])];
    return regions.flatMap((region) => {
      const after = this.get(region);
      const until = target.get(region);
      return until > after ? [{ region, after, until }] : [];
    });
  }

  /** Sets `region` back to `seq` (an id clamped to what a log holds). */
  lower(region: string, seq: number): void {
    if (seq < this.get(region)) this.seqs.set(region, seq);
  }

  copy(): LogPosition {
    return new LogPosition(this.seqs);
  }

  /** Moves to `other` in every region where `other` is further. */
  raise(other: LogPosition): this {
    for (const [region, seq] of other.seqs) this.advance(region, seq);
    return this;
  }

  /** Further than `other` in some region. */
  exceeds(other: LogPosition): boolean {
    for (const [region, seq] of this.seqs) if (seq > other.get(region)) return true;
    return false;
  }

  /** The id that names this position: a bare number without regions. */
  id(regionOrder: readonly string[] = []): string {
    if (this.seqs.size <= 1 && [...this.seqs.keys()].every((r) => r === ONE_LOG)) return formatEventId({ kind: 'single', seq: this.get(ONE_LOG) });
    return formatEventId({ kind: 'regions', seqs: this.seqs }, regionOrder);
  }
}
