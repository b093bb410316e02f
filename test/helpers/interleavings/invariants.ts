// The rules the interleaving tests hold the ownership code to (spec 4.1 rule 4: one stream per
// account and channel across the mesh, a second open evicting the first). Each returns the broken
// rules as sentences.
//   After every step: a stream ends as evicted only when a newer claim of another stream was stored
//     on its key (history, so it does not depend on how independent steps were ordered).
//   Once nothing is left in flight: every open finished; at most one live stream per key; no live
//     stream whose claim another stream's replaced since; and, the notices alone having told each
//     running node what changed (no notice is lost here), the claims bucket names every other live
//     stream of a running node: one swept from under it was written back (`settledProblems`). Then,
//     after one renewal of every claim (the last safety net, for what no notice tells), the claims
//     bucket names each live stream, no claim of an ended stream of a running node is left, and the
//     owner records list exactly the live streams (relay-stream-owners, what the caps count)
//     (`renewedProblems`).

import { ownerOf as streamOwner } from '../../../services/core/owner.js';
import { streamClaimKey, type ClaimedStream } from '../../../services/gateway/ownership/claim-keys.js';
import type { Holdings } from '../../../services/gateway/ownership/owner-records.js';
import { describeHoldings } from './twin-io.js';
import type { TwinMesh } from './twin-mesh.js';

export function evictionProblem(mesh: TwinMesh, stream: ClaimedStream): string | null {
  const key = streamClaimKey(stream);
  const own = mesh.landed.filter((w) => w.key === key && w.conn === stream.id).map((w) => w.revision);
  if (own.length === 0) return `${stream.id} was evicted, but no claim of it was ever stored`;
  const last = Math.max(...own);
  if (mesh.landed.some((w) => w.key === key && w.conn !== stream.id && w.revision > last)) return null;
  return `${stream.id} was evicted without a newer holder: its claim @${last} is the latest stored on ${key}`;
}

type Live = Map<string, Array<{ stream: ClaimedStream; node: string }>>;

/** Live streams by claim key, with the node holding each. */
function liveStreams(mesh: TwinMesh): Live {
  const live: Live = new Map();
  for (const node of mesh.nodes.values()) {
    if (node.crashed) continue;
    for (const t of node.live()) {
      const key = streamClaimKey(t.stream);
      live.set(key, [...(live.get(key) ?? []), { stream: t.stream, node: node.id }]);
    }
  }
  return live;
}

export function settledProblems(mesh: TwinMesh): string[] {
  const problems: string[] = [];
  for (const node of mesh.nodes.values()) {
    for (const t of node.live()) if (!node.crashed && t.state === 'opening') problems.push(`the open of ${t.stream.id} on ${node.id} never finished`);
  }
  for (const [key, held] of liveStreams(mesh)) {
    if (held.length > 1) problems.push(`${key} has ${held.length} live streams: ${held.map((h) => `${h.stream.id} on ${h.node}`).join(', ')}`);
    for (const { stream } of held) {
      // The second open evicts the first (spec 4.1 rule 4): once another stream's claim is stored
      // after this stream's first, this stream must end, even if that newer stream ended since.
      const first = mesh.landed.find((w) => w.key === key && w.conn === stream.id);
      const newer = first && mesh.landed.find((w) => w.key === key && w.conn !== stream.id && w.revision > first.revision);
      if (newer !== undefined) problems.push(`${stream.id} is still live, though ${newer.conn}'s claim @${newer.revision} replaced it`);
    }
  }
  for (const node of mesh.nodes.values()) {
    if (node.crashed || node.paused) continue;
    for (const t of node.live()) {
      const key = streamClaimKey(t.stream);
      const first = mesh.landed.find((w) => w.key === key && w.conn === t.stream.id);
      const replaced = first !== undefined && mesh.landed.some((w) => w.key === key && w.conn !== t.stream.id && w.revision > first.revision);
      const named = mesh.claims.peek(key)?.claim?.conn ?? null;
      if (!replaced && named !== t.stream.id) problems.push(`${t.stream.id} is live on ${node.id}, but ${key} names ${named ?? 'nobody'} and nothing told ${node.id} (before any renewal)`);
    }
  }
  return problems;
}

export function renewedProblems(mesh: TwinMesh): string[] {
  const problems: string[] = [];
  const live = liveStreams(mesh);
  for (const [key, held] of live) {
    const claim = mesh.claims.peek(key)?.claim ?? null;
    if (held.length === 1 && claim?.conn !== held[0]!.stream.id) problems.push(`${key} names ${claim?.conn ?? 'nobody'}, but its live stream is ${held[0]!.stream.id}`);
  }
  for (const key of mesh.claims.keys()) {
    const claim = mesh.claims.peek(key)?.claim ?? null;
    if (claim === null || live.has(key) || mesh.nodes.get(claim.node)?.crashed === true) continue;
    problems.push(`${key} still names ${claim.conn} of ${claim.node}, which holds no live stream on it`);
  }
  problems.push(...ownerProblems(mesh, live));
  return problems;
}

/** The owner records, less the keys of crashed nodes (not counted), against the live streams. */
function ownerProblems(mesh: TwinMesh, live: Map<string, Array<{ stream: ClaimedStream; node: string }>>): string[] {
  const expected = new Map<string, Holdings>();
  for (const [key, held] of live) {
    for (const h of held) {
      const owner = streamOwner(h.stream);
      expected.set(owner, (expected.get(owner) ?? new Map<string, string>()).set(key, h.node));
    }
  }
  const problems: string[] = [];
  for (const owner of new Set([...mesh.owners.owners(), ...expected.keys()])) {
    const counted = new Map([...mesh.owners.peek(owner).holdings].filter(([, node]) => mesh.nodes.get(node)?.crashed !== true));
    const want = expected.get(owner) ?? new Map<string, string>();
    if (describeHoldings(sorted(counted)) !== describeHoldings(sorted(want))) {
      problems.push(`the owner record of ${owner} counts ${describeHoldings(counted)}, the live streams are ${describeHoldings(want)}`);
    }
  }
  return problems;
}

function sorted(h: Holdings): Holdings {
  return new Map([...h].sort(([a], [b]) => a.localeCompare(b)));
}
