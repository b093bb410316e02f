// One node's I/O in the simulated mesh (twin-mesh.ts), behind the same interfaces the gateway's NATS
// implementations have: every bucket operation waits in the node's queue until the scheduler lands
// it, and a write's answer waits again until it is heard; a write or delete is heard on the
// subscriptions of the nodes watching its account from the moment it is sent (so a hint may arrive
// before the write is stored, or for a write that is refused); notices go on the channel between
// the two nodes; timers fire when the scheduler says. The buckets themselves are the in-memory
// twins with JetStream's revision semantics (memory-claim-store.ts, memory-owner-records.ts).

import type { StreamClaim } from '../../../schemas/records.js';
import type { ClaimHints, ClaimNotice, HintListener } from '../../../services/gateway/ownership/claim-hints.js';
import type { ClaimIndexLog } from '../../../services/gateway/ownership/claim-index-log.js';
import type { ClaimStore, Freed, StoredClaim } from '../../../services/gateway/ownership/claim-store.js';
import type { Holdings, OwnerRecord, OwnerRecords } from '../../../services/gateway/ownership/owner-records.js';
import type { CancelTimer, Timers } from '../../../services/core/timers.js';
import type { TwinMesh } from './twin-mesh.js';

/** The account a claim key belongs to (what an account's subscription covers). */
export function accountOf(key: string): string {
  return key.split('.')[0]!;
}

export function describeClaim(c: StoredClaim | null): string {
  if (c === null) return 'nothing';
  if (c.claim !== null) return `${c.claim.conn} @${c.revision}`;
  return c.freed !== undefined ? `a ${c.freed.by}'s marker (${c.freed.conn}) @${c.revision}` : `a delete marker @${c.revision}`;
}

export class TwinClaimStore implements ClaimStore {
  constructor(
    private readonly mesh: TwinMesh,
    private readonly node: string,
  ) {}

  get(key: string): Promise<StoredClaim | null> {
    return this.mesh.request(this.node, 'claims', { touches: `key:${key}`, what: `read ${key}`, read: true, apply: () => this.mesh.claims.getNow(key), say: describeClaim });
  }

  write(key: string, claim: StreamClaim, revision: number): Promise<number> {
    this.mesh.publish(this.node, key, claim.conn);
    const what = `write ${key} = ${claim.conn} at @${revision}`;
    return this.mesh.request(this.node, 'claims', {
      touches: `key:${key}`,
      what,
      read: false,
      writes: claim.conn,
      apply: () => {
        const stored = this.mesh.claims.writeNow(key, claim, revision);
        this.mesh.landed.push({ key, revision: stored, conn: claim.conn });
        return stored;
      },
      say: (r) => `@${r}`,
    });
  }

  remove(key: string, revision: number, freed: Freed): Promise<number> {
    this.mesh.publish(this.node, key, null);
    const what = `${freed.by === 'sweep' ? 'sweep' : 'delete'} ${key} (${freed.conn}) at @${revision}`;
    const apply = (): number => {
      if (freed.by === 'sweep' && this.mesh.claims.peek(key)?.revision !== revision) this.mesh.witness('a sweep finds the key claimed again since it read it');
      return this.mesh.claims.removeNow(key, revision, freed);
    };
    return this.mesh.request(this.node, 'claims', { touches: `key:${key}`, what, read: false, apply, say: (r) => `deleted @${r}` });
  }
}

export function describeHoldings(h: Holdings): string {
  return `{${[...h].map(([k, n]) => `${k}: ${n}`).join(', ')}}`;
}

export class TwinOwnerRecords implements OwnerRecords {
  constructor(
    private readonly mesh: TwinMesh,
    private readonly node: string,
  ) {}

  read(owner: string): Promise<OwnerRecord> {
    const say = (r: OwnerRecord): string => `${describeHoldings(r.holdings)} @${r.revision}`;
    return this.mesh.request(this.node, 'owners', { touches: `owner:${owner}`, what: `read owner ${owner}`, read: true, apply: () => this.mesh.owners.peek(owner), say });
  }

  write(owner: string, holdings: Holdings, revision: number): Promise<OwnerRecord> {
    const copy = new Map(holdings);
    const what = `write owner ${owner} = ${describeHoldings(copy)} at @${revision}`;
    const apply = (): OwnerRecord => {
      if ([...this.mesh.owners.peek(owner).holdings.values()].some((n) => n !== this.node && this.mesh.takenForDead.has(n))) {
        this.mesh.witness('a node writes an owner record naming a node taken for dead');
      }
      return this.mesh.owners.writeNow(owner, copy, revision);
    };
    return this.mesh.request(this.node, 'owners', { touches: `owner:${owner}`, what, read: false, apply, say: (r) => `@${r.revision}` });
  }
}

/** The node's account subscriptions (counted, as NatsClaimHints does) and its notices. */
export class TwinHints implements ClaimHints {
  private readonly accounts = new Map<string, number>();
  listener: HintListener | undefined;

  constructor(
    private readonly mesh: TwinMesh,
    private readonly node: string,
  ) {}

  listen(listener: HintListener): void {
    this.listener = listener;
  }

  watchAccount(account: string): void {
    this.mesh.touch(`watch:${account}`);
    this.accounts.set(account, (this.accounts.get(account) ?? 0) + 1);
  }

  unwatchAccount(account: string): void {
    this.mesh.touch(`watch:${account}`);
    const n = (this.accounts.get(account) ?? 0) - 1;
    if (n > 0) this.accounts.set(account, n);
    else this.accounts.delete(account);
  }

  /** How many times the account is watched now (0: not heard). */
  watching(account: string): number {
    return this.accounts.get(account) ?? 0;
  }

  tell(node: string, notice: ClaimNotice): void {
    this.mesh.network.send(this.node, node, `notice: ${notice.key} of ${notice.conn} ${notice.kind} @${notice.revision}`, () => {
      if (this.mesh.inFlight(node, (op) => op.writes === notice.conn)) {
        this.mesh.witness(notice.kind === 'replaced' ? 'a notice arrives before its node hears its own write answered' : 'a sweep’s notice arrives before its node hears its own write answered');
      }
      this.mesh.nodes.get(node)?.hints.listener?.noticed(notice);
    });
  }

  close(): void {
    this.accounts.clear();
  }
}

export class TwinTimers implements Timers {
  constructor(
    private readonly mesh: TwinMesh,
    private readonly node: string,
  ) {}

  after(ms: number, fire: () => void): CancelTimer {
    return this.mesh.network.timer(this.node, ms, fire);
  }

  afterTurn(fire: () => void): void {
    this.mesh.network.timer(this.node, 0, fire);
  }
}

/** RELAY_CLAIM_INDEX: each node's list of claimed keys, shared by the mesh (never emptied, as there). */
export class TwinIndexLog implements ClaimIndexLog {
  constructor(private readonly mesh: TwinMesh) {}

  append(node: string, keys: string[]): void {
    this.mesh.touch(`index:${node}`);
    const list = this.mesh.index.get(node) ?? new Set<string>();
    for (const k of keys) list.add(k);
    this.mesh.index.set(node, list);
  }

  read(node: string): Promise<Set<string>> {
    this.mesh.touch(`index:${node}`);
    return Promise.resolve(new Set(this.mesh.index.get(node)));
  }
}
