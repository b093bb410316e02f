// How many profile API look-ups run at once, and who waits for a free place. Without it a flood of
// requests with made-up tokens (each a look-up) queued without bound behind the HTTP agent, and a
// real player's new session waited behind all of them.
//
// Fairness is by client address (IPv6: its PROFILE_API_IPV6_PREFIX block, see client-address.ts), never by client
// credentials: those are public (DESIGN.md section 6). One address has at most `perAddress`
// look-ups running or waiting, so a flood from one address holds a few places and the rest serve
// everyone else at once; when every place is taken, a freed place goes to the addresses waiting in
// turn (round robin), so a long queue from one address is no queue for the others. The whole queue
// stays bounded (PROFILE_API_MAX_QUEUE); when it is full, a newcomer from an address with fewer
// waiting takes the place of the newest waiter of the address with the most waiting (longest-queue
// drop), so a few hundred flooding addresses cannot shut out an address with nothing queued.
// Beyond the address's share: 429 too_many_session_checks at once (that client's own doing, waiting
// makes room). Beyond the queue: 503 profile_api_busy at once, to the displaced waiter too (the
// relay cannot serve everyone; which one is refused is fairness, not a limit it passed). A waiter
// leaves the queue at its deadline (the look-up's timeout counts from when it was asked for, not from
// when a place came free) or when its client goes away. An address's state is dropped as soon as it
// has nothing running or waiting.

import { fairnessGroup } from './client-address.js';
import { RelayError } from './errors.js';

export interface Ticket {
  /** Resolves when a place is granted; rejects at the deadline or on cancel. */
  granted: Promise<void>;
  /** Gives the place back (after the look-up), or leaves the queue if still waiting. */
  leave(): void;
  /** Leaves the queue if still waiting (nobody wants the look-up any more); a granted place is kept until leave(). */
  cancel(): void;
}

/** Why the gate refused a look-up: its address has its share, or the whole queue is full. */
export const GATE_REFUSALS = ['address_busy', 'queue_full', 'displaced'] as const;
export type GateRefusal = (typeof GATE_REFUSALS)[number];

export interface LookupGateOptions {
  /** Look-ups running at once (PROFILE_API_CONCURRENCY). */
  places: number;
  /** Look-ups waiting, all addresses together (PROFILE_API_MAX_QUEUE). */
  maxQueue: number;
  /** Look-ups one address may have running or waiting (PROFILE_API_PER_ADDRESS). */
  perAddress: number;
  /** IPv6 addresses count per block of this many bits (PROFILE_API_IPV6_PREFIX). */
  ipv6Prefix: number;
  refused?: (reason: GateRefusal) => void;
}

interface Waiter {
  grant(): void;
  fail(e: RelayError): void;
}

/** One address's (or /64's) look-ups. */
interface Group {
  running: number;
  waiting: Waiter[];
}

const BUSY_RETRY_SECONDS = 2;

export class LookupGate {
  private readonly options: LookupGateOptions;
  private running = 0;
  private queued = 0;
  /** Every address with a look-up running or waiting. */
  private readonly groups = new Map<string, Group>();
  /** Addresses with waiters, in the order they are served: the first is served, then moves last. */
  private readonly turns = new Map<string, Group>();

  constructor(options: LookupGateOptions) {
    this.options = options;
  }

  /** Addresses holding state (for tests: nothing a client abandons stays in memory). */
  get addresses(): number {
    return this.groups.size;
  }

  /** Look-ups waiting for a place, all addresses together. */
  get waiting(): number {
    return this.queued;
  }

  /** Enters the gate for `address`; throws 429 beyond the address's share, 503 beyond the queue. */
  enter(address: string, timeoutMs: number): Ticket {
    const key = fairnessGroup(address, this.options.ipv6Prefix);
    const group = this.groups.get(key) ?? { running: 0, waiting: [] };
    if (group.running + group.waiting.length >= this.options.perAddress) throw this.busy('address_busy');
    // Places free means nobody waits (a freed place is handed on at once), so nobody is overtaken.
    if (this.running < this.options.places) {
      this.groups.set(key, group);
      this.take(group);
      return { granted: Promise.resolve(), leave: once(() => this.release(key, group)), cancel: () => undefined };
    }
    if (this.queued >= this.options.maxQueue && !this.displaceFor(group)) throw this.busy('queue_full');
    this.groups.set(key, group);
    return this.wait(key, group, timeoutMs);
  }

  private wait(key: string, group: Group, timeoutMs: number): Ticket {
    let waiter!: Waiter;
    let granted = false;
    const promise = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => waiter.fail(timedOut(timeoutMs)), timeoutMs);
      waiter = {
        grant: () => {
          clearTimeout(timer);
          granted = true;
          resolve();
        },
        fail: (e) => {
          clearTimeout(timer);
          this.unqueue(key, group, waiter);
          reject(e);
        },
      };
    });
    // Rejections are read by whoever awaits `granted`; an abandoned ticket must not crash the process.
    promise.catch(() => undefined);
    group.waiting.push(waiter);
    this.queued++;
    if (group.waiting.length === 1) this.turns.set(key, group);
    const cancel = (): void => {
      if (!granted) waiter.fail(new RelayError('profile_api_unavailable', 'The look-up was given up before it started.'));
    };
    return {
      granted: promise,
      leave: once(() => {
        if (granted) this.release(key, group);
        else cancel();
      }),
      cancel,
    };
  }

  /**
   * Makes room in a full queue for a newcomer of `group`: the newest waiter of the address with the
   * most waiting leaves at once, if that address has more waiting than the newcomer's. Its oldest
   * waiters, nearest their turn, keep their places. False when no address has more.
   */
  private displaceFor(group: Group): boolean {
    let longest: Group | undefined;
    for (const g of this.turns.values()) if (longest === undefined || g.waiting.length > longest.waiting.length) longest = g;
    if (longest === undefined || longest.waiting.length <= group.waiting.length) return false;
    longest.waiting.at(-1)!.fail(this.busy('displaced'));
    return true;
  }

  private take(group: Group): void {
    this.running++;
    group.running++;
  }

  private release(key: string, group: Group): void {
    this.running--;
    group.running--;
    this.dropIfIdle(key, group);
    const next = this.turns.entries().next();
    if (next.done === true) return;
    const [nextKey, nextGroup] = next.value;
    const waiter = nextGroup.waiting.shift()!;
    this.queued--;
    // Served: this address goes to the back of the line if it still waits.
    this.turns.delete(nextKey);
    if (nextGroup.waiting.length > 0) this.turns.set(nextKey, nextGroup);
    this.take(nextGroup);
    waiter.grant();
  }

  /** A waiter that leaves before its turn (deadline or cancel). */
  private unqueue(key: string, group: Group, waiter: Waiter): void {
    const i = group.waiting.indexOf(waiter);
    if (i === -1) return;
    group.waiting.splice(i, 1);
    this.queued--;
    if (group.waiting.length === 0) this.turns.delete(key);
    this.dropIfIdle(key, group);
  }

  private dropIfIdle(key: string, group: Group): void {
    if (group.running === 0 && group.waiting.length === 0) this.groups.delete(key);
  }

  private busy(reason: GateRefusal): RelayError {
    this.options.refused?.(reason);
    if (reason === 'address_busy') {
      return new RelayError('too_many_session_checks', 'Too many sessions from this address are being checked right now; try again shortly.', {
        retryAfter: BUSY_RETRY_SECONDS,
      });
    }
    return new RelayError('profile_api_busy', 'Too many sessions are being checked right now; try again shortly.', { retryAfter: BUSY_RETRY_SECONDS });
  }
}

function once(f: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    f();
  };
}

function timedOut(ms: number): RelayError {
  return new RelayError('profile_api_unavailable', `The game profile API did not answer within ${ms} ms; try again shortly.`, { retryAfter: 5 });
}
