// One gateway of the simulated mesh: the real MeshClaims (ownership.ts, claim-index.ts and the rest
// of the wing) over this node's twin I/O (twin-io.ts), and in place of the gateway's streams a
// record of each stream's state, opened and ended the way gateway.ts does it: the claim, and one end
// (the client left, the open failed, or an eviction) that releases the claim. No caps: a census
// (owner-census.ts) is answered from memory in one step, and tested at its own level.

import type { ClaimedStream } from '../../../services/gateway/ownership/claim-keys.js';
import { streamClaimKey } from '../../../services/gateway/ownership/claim-keys.js';
import { createLogger } from '../../../services/core/logger.js';
import { Ownership as MeshClaims } from '../../../services/gateway/ownership/ownership.js';
import { evictionProblem } from './invariants.js';
import { TwinClaimStore, TwinIndexLog, TwinNotices, TwinTimers } from './twin-io.js';
import type { TwinMesh } from './twin-mesh.js';

const quiet = createLogger({ level: 'silent', pretty: false });
/** Long enough that nothing ages out unless a scenario says so (the pause). */
const CLAIM_TTL_MS = 60_000;

export type StreamState = 'opening' | 'open' | 'ended';

export interface TwinStream {
  readonly stream: ClaimedStream;
  state: StreamState;
  /** Why it ended: left, error, evicted, crashed. */
  reason: string | null;
}

export class TwinNode {
  readonly notices: TwinNotices;
  readonly claims: MeshClaims;
  readonly streams = new Map<string, TwinStream>();
  paused = false;
  crashed = false;
  private opened = 0;

  constructor(
    private readonly mesh: TwinMesh,
    readonly id: string,
  ) {
    this.notices = new TwinNotices(mesh, id);
    this.claims = new MeshClaims({
      nodeId: id,
      store: new TwinClaimStore(mesh, id),
      notices: this.notices,
      indexLog: new TwinIndexLog(mesh),
      liveness: { isAlive: (node) => mesh.isAlive(node), hearing: () => true, mirror: { values: () => [] } },
      logger: quiet,
      claimTtlMs: CLAIM_TTL_MS,
      evict: (streamId) => this.evict(streamId),
      timers: new TwinTimers(mesh, id),
    });
    this.claims.listen();
  }

  /** A new stream of the account on the channel (ids are the node's name and a count: a1, a2, ...). */
  stream(account: string, channel: string): ClaimedStream {
    return { id: `${this.id}${++this.opened}`, account, clientId: 'relay_key', channel, openedAt: 0 };
  }

  /** Opens the stream as gateway.ts does; returns at once (the open goes on in steps). */
  open(stream: ClaimedStream): void {
    void this.opening(stream);
  }

  private async opening(stream: ClaimedStream): Promise<void> {
    const t: TwinStream = { stream, state: 'opening', reason: null };
    this.streams.set(stream.id, t);
    try {
      await this.claims.claim(stream);
    } catch {
      this.end(t, 'error');
      return;
    }
    if (t.state === 'opening') t.state = 'open';
  }

  /** The client goes away. */
  leave(streamId: string): void {
    const t = this.streams.get(streamId);
    if (t === undefined) return;
    if (t.state !== 'ended' && this.mesh.inFlight(this.id, (op) => op.writes === streamId)) {
      this.mesh.witness(t.state === 'opening' ? 'a stream ends while its claim is being written' : 'a stream ends while its claim is being renewed');
    }
    this.end(t, 'left');
  }

  /** Stops running (a long GC, a frozen VM) past the node timeout: taken for dead by the others. */
  pause(): void {
    this.paused = true;
    this.mesh.takenForDead.add(this.id);
  }

  /** Runs again; the others take it for alive once they hear its heartbeat (`beat`). */
  wake(): void {
    this.paused = false;
    for (const t of this.live()) {
      const now = this.mesh.claims.peek(streamClaimKey(t.stream));
      if (now?.claim != null && now.claim.conn !== t.stream.id) this.mesh.witness('a paused node wakes after another took its key');
      if (now?.freed?.by === 'sweep' && now.freed.conn === t.stream.id) this.mesh.witness('a paused node wakes to find its claim swept');
    }
  }

  /** The others hear the node's heartbeat again. */
  beat(): void {
    this.mesh.takenForDead.delete(this.id);
  }

  renew(): void {
    void this.claims.renewalTick();
  }

  sweep(node: string): void {
    void this.claims.sweep(node);
  }

  crash(): void {
    if (this.mesh.inFlight(this.id, (op) => op.writes !== undefined)) this.mesh.witness('a node crashes with a claim write in flight');
    this.crashed = true;
    this.mesh.takenForDead.add(this.id);
    for (const t of this.streams.values()) {
      if (t.state === 'ended') continue;
      t.state = 'ended';
      t.reason = 'crashed';
    }
    this.mesh.network.dropFor(this.id);
  }

  /** Streams not ended. */
  live(): TwinStream[] {
    return [...this.streams.values()].filter((t) => t.state !== 'ended');
  }

  /** What the gateway's evict does: close the stream, whose end releases its claim. */
  private evict(streamId: string): void {
    const t = this.streams.get(streamId);
    if (t === undefined || t.state === 'ended') return;
    const problem = evictionProblem(this.mesh, t.stream);
    if (problem !== null) this.mesh.problems.push(problem);
    this.end(t, 'evicted');
  }

  private end(t: TwinStream, reason: string): void {
    if (t.state === 'ended') return;
    t.state = 'ended';
    t.reason = reason;
    this.claims.release(t.stream);
  }
}
