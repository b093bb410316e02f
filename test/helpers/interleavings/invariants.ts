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
//     bucket names each live stream, and no claim of an ended stream of a running node is left
//     (`renewedProblems`).

import { streamClaimKey, type ClaimedStream } from '../../../services/gateway/ownership/claim-keys.js';
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
  return problems;
}
