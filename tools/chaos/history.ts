// What happened during a run, in the order it happened, as Jepsen keeps it: every fault's start and
// heal, every operation's invocation, attempts and outcome, every stream's opens and ends, and what
// the probes saw. The checker reads the workload's own records; the history is what the report
// quotes around each anomaly, so it can be read without the logs.

export type EventKind = 'fault' | 'op' | 'stream' | 'probe' | 'note';

export interface HistoryEvent {
  /** ms since the run began. */
  t: number;
  kind: EventKind;
  /** Who: a fault (#12), a writer's operation (w1-0:57), a reader's client (r2-1#3), a probe (gateway-1). */
  subject: string;
  text: string;
}

export class History {
  readonly startedAt: number;
  private readonly events: HistoryEvent[] = [];

  constructor(startedAt = Date.now()) {
    this.startedAt = startedAt;
  }

  now(): number {
    return Date.now() - this.startedAt;
  }

  record(kind: EventKind, subject: string, text: string, t = this.now()): void {
    this.events.push({ t, kind, subject, text });
  }

  get length(): number {
    return this.events.length;
  }

  /**
   * The events around time `t` (those of `subjects` and every fault and probe event, within
   * `windowMs` either side), at most `limit`, nearest first kept, in time order.
   */
  around(t: number, subjects: readonly string[], windowMs = 5000, limit = 40): HistoryEvent[] {
    const wanted = new Set(subjects);
    const near = this.events.filter((e) => Math.abs(e.t - t) <= windowMs && (e.kind === 'fault' || e.kind === 'probe' || e.kind === 'note' || wanted.has(e.subject)));
    return near
      .sort((a, b) => Math.abs(a.t - t) - Math.abs(b.t - t))
      .slice(0, limit)
      .sort((a, b) => a.t - b.t);
  }

  all(): readonly HistoryEvent[] {
    return this.events;
  }
}

/** "+123.456s" for a history time. */
export function at(t: number): string {
  return `+${(t / 1000).toFixed(3)}s`;
}
