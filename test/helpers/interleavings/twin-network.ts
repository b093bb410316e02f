// What is in flight in the simulated mesh (twin-mesh.ts), as processes whose next step the explorer
// may take (explorer.ts):
//   land:<node>:<bucket>   the node's oldest operation not yet landed lands (one connection: in order);
//                          a read is answered as it lands, a write or delete is answered later
//   answer:<node>:<bucket> the node hears the answer to its oldest landed write (in order)
//   msg:<from>><to>        the next notice from one node to another arrives (in order)
//   timer:<node>           the node's earliest timer fires (a node's timers fire in the order they
//                          fall due, on its own clock; against the I/O, at any moment)
// Each process names what its next step touches, for the partial-order reduction.

import type { Step } from './explorer.js';

export interface RequestOptions<T> {
  /** The key (`key:...`) it lands on. */
  touches: string;
  what: string;
  read: boolean;
  /** The stream a claim write names (what the witnesses look for). */
  writes?: string;
  /** Applies the operation to the bucket as it lands: returns the answer, or throws a refusal. */
  apply: () => T;
  /** The answer, in words. */
  say: (value: T) => string;
}

interface Op extends RequestOptions<unknown> {
  readonly seq: number;
  readonly node: string;
  readonly bucket: string;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: unknown) => void;
  outcome?: { ok: true; value: unknown } | { ok: false; error: unknown };
}

interface Message {
  readonly seq: number;
  readonly what: string;
  readonly deliver: () => void;
}

interface Timer {
  readonly seq: number;
  readonly due: number;
  readonly ms: number;
  readonly fire: () => void;
}

export interface Process extends Step {
  /** When its next step was sent or set: the default order takes the oldest first. */
  readonly seq: number;
  readonly touches: string[];
  /** Takes the step; returns what happened, in words. */
  readonly take: () => string;
}

export class TwinNetwork {
  private seq = 0;
  private readonly lands = new Map<string, Op[]>();
  private readonly answers = new Map<string, Op[]>();
  private readonly channels = new Map<string, Message[]>();
  private readonly timers = new Map<string, Timer[]>();
  /** Each node's clock, moved on by its timers. */
  private readonly clocks = new Map<string, number>();

  /** `gone(node)`: crashed (nothing reaches it any more). */
  constructor(private readonly gone: (node: string) => boolean) {}

  request<T>(node: string, bucket: string, o: RequestOptions<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const op: Op = { seq: this.seq++, node, bucket, ...(o as RequestOptions<unknown>), resolve: resolve as (v: unknown) => void, reject };
      push(this.lands, `land:${node}:${bucket}`, op);
    });
  }

  send(from: string, to: string, what: string, deliver: () => void): void {
    if (this.gone(to)) return;
    push(this.channels, `msg:${from}>${to}`, { seq: this.seq++, what: `${to} hears from ${from}: ${what}`, deliver });
  }

  timer(node: string, ms: number, fire: () => void): () => void {
    const t: Timer = { seq: this.seq++, due: (this.clocks.get(node) ?? 0) + ms, ms, fire };
    const list = this.timers.get(node) ?? [];
    list.push(t);
    list.sort((x, y) => x.due - y.due || x.seq - y.seq);
    this.timers.set(node, list);
    return () => {
      const i = list.indexOf(t);
      if (i >= 0) list.splice(i, 1);
    };
  }

  /** Whether the node has an operation sent but not yet answered that `matches`. */
  inFlight(node: string, matches: (op: RequestOptions<unknown>) => boolean): boolean {
    for (const map of [this.lands, this.answers]) {
      for (const [id, ops] of map) if (id.split(':')[1] === node && ops.some(matches)) return true;
    }
    return false;
  }

  /** What a crash loses: answers, messages and timers on their way to the node, and its reads. */
  dropFor(node: string): void {
    for (const [id, ops] of this.lands) if (id.startsWith(`land:${node}:`)) this.lands.set(id, ops.filter((op) => !op.read));
    for (const id of [...this.answers.keys()]) if (id.startsWith(`answer:${node}:`)) this.answers.delete(id);
    for (const id of [...this.channels.keys()]) if (id.endsWith(`>${node}`)) this.channels.delete(id);
    this.timers.delete(node);
  }

  /** The next step of each process; `runs(node)`: whether the node runs code now (not paused or crashed). */
  processes(runs: (node: string) => boolean): Process[] {
    const out: Process[] = [];
    for (const [id, ops] of this.lands) {
      const op = ops[0];
      if (op === undefined || (op.read && !runs(op.node))) continue;
      out.push({ id, seq: op.seq, touches: op.read ? [op.touches, `node:${op.node}`] : [op.touches], take: () => this.land(ops, op) });
    }
    for (const [id, ops] of this.answers) {
      const op = ops[0];
      if (op === undefined || !runs(op.node)) continue;
      out.push({ id, seq: op.seq, touches: [`node:${op.node}`], take: () => this.answer(ops, op) });
    }
    for (const [id, msgs] of this.channels) {
      const to = id.slice(id.indexOf('>') + 1);
      const m = msgs[0];
      if (m === undefined || !runs(to)) continue;
      out.push({ id, seq: m.seq, touches: [`node:${to}`], take: () => (msgs.shift(), m.deliver(), m.what) });
    }
    for (const [node, list] of this.timers) {
      const t = list[0];
      if (t === undefined || !runs(node)) continue;
      const fire = (): string => (list.shift(), this.clocks.set(node, t.due), t.fire(), `${node}: the ${t.ms} ms timer fires`);
      out.push({ id: `timer:${node}`, seq: t.seq, touches: [`node:${node}`], take: fire });
    }
    return out;
  }

  private land(ops: Op[], op: Op): string {
    ops.shift();
    try {
      op.outcome = { ok: true, value: op.apply() };
    } catch (error) {
      op.outcome = { ok: false, error };
    }
    const said = op.outcome.ok ? op.say(op.outcome.value) : 'refused (wrong revision)';
    if (op.read) {
      settle(op);
      return `${op.node}: ${op.what} -> ${said}`;
    }
    if (!this.gone(op.node)) push(this.answers, `answer:${op.node}:${op.bucket}`, op);
    return `${op.node}: ${op.what} lands: ${said}`;
  }

  private answer(ops: Op[], op: Op): string {
    ops.shift();
    settle(op);
    const o = op.outcome!;
    return `${op.node} hears: ${op.what} -> ${o.ok ? op.say(o.value) : 'refused'}`;
  }
}

function settle(op: Op): void {
  const o = op.outcome!;
  if (o.ok) op.resolve(o.value);
  else op.reject(o.error);
}

function push<T>(map: Map<string, T[]>, id: string, item: T): void {
  const list = map.get(id);
  if (list === undefined) map.set(id, [item]);
  else list.push(item);
}
