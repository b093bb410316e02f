// One node's I/O in the simulated mesh (twin-mesh.ts), behind the same interfaces the gateway's NATS
// implementations have: every bucket operation waits in the node's queue until the scheduler lands
// it, and a write's answer waits again until it is heard; notices go on the channel between the two
// nodes, sent once the write or delete they tell of is answered (as the gateway sends them); timers
// fire when the scheduler says. The bucket itself is the in-memory twin with JetStream's revision
// semantics (memory-claim-store.ts).

import type { StreamClaim } from '../../../schemas/records.js';
import type { ClaimNotice, ClaimNotices, NoticeListener } from '../../../services/gateway/ownership/claim-notices.js';
import type { ClaimIndexLog } from '../../../services/gateway/ownership/claim-index-log.js';
import type { ClaimStore, Freed, StoredClaim } from '../../../services/gateway/ownership/claim-store.js';
import type { CancelTimer, Timers } from '../../../services/core/timers.js';
import type { TwinMesh } from './twin-mesh.js';

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
    const what = `${freed.by === 'sweep' ? 'sweep' : 'delete'} ${key} (${freed.conn}) at @${revision}`;
    const apply = (): number => {
      if (freed.by === 'sweep' && this.mesh.claims.peek(key)?.revision !== revision) this.mesh.witness('a sweep finds the key claimed again since it read it');
      return this.mesh.claims.removeNow(key, revision, freed);
    };
    return this.mesh.request(this.node, 'claims', { touches: `key:${key}`, what, read: false, apply, say: (r) => `deleted @${r}` });
  }
}

/** The node's notices, each on the channel from the teller to the told. */
export class TwinNotices implements ClaimNotices {
  listener: NoticeListener | undefined;

  constructor(
    private readonly mesh: TwinMesh,
    private readonly node: string,
  ) {}

  listen(listener: NoticeListener): void {
    this.listener = listener;
  }

  tell(node: string, notice: ClaimNotice): void {
    this.mesh.network.send(this.node, node, `notice: ${notice.key} of ${notice.conn} ${notice.kind} @${notice.revision}`, () => {
      if (this.mesh.inFlight(node, (op) => op.writes === notice.conn)) {
        this.mesh.witness(notice.kind === 'replaced' ? 'a notice arrives before its node hears its own write answered' : 'a sweep’s notice arrives before its node hears its own write answered');
      }
      if (this.mesh.inFlight(node, (op) => op.read && op.touches === `key:${notice.key}`)) this.mesh.witness(`a ${notice.kind === 'replaced' ? 'replacement' : 'sweep'}’s notice arrives while its key is being read`);
      const now = this.mesh.claims.peek(notice.key);
      if (now?.claim?.conn === notice.conn && now.revision > notice.revision) this.mesh.witness('a sweep’s notice arrives after its claim was written back');
      this.mesh.nodes.get(node)?.notices.listener?.noticed(notice);
    });
  }

  close(): void {
    this.listener = undefined;
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
