// What one gateway does with claims it hears from other regions (services/gateway/ownership/region-claims.ts),
// beyond the pair rules the interleaving test takes in every order: what it refuses to act on, and
// how much it sends back.
import { describe, expect, it } from 'vitest';
import { encodeAnnouncements, MAX_CLOCK_AHEAD_MS, parseAnnouncement, RegionClaims, type RegionClaim, type RegionClaimLinks } from '../../services/gateway/ownership/region-claims.js';
import type { ClaimedStream } from '../../services/gateway/ownership/claim-keys.js';
import type { Timers } from '../../services/core/timers.js';
import { streamClaimKey } from '../../services/gateway/ownership/claim-keys.js';

const NOW = 1_800_000_000_000;
const local: ClaimedStream = { id: 'mine', account: '0b0e4c8e-0000-4000-8000-000000000001', clientId: 'c', channel: 'play.example.net', openedAt: NOW - 5_000 };
const KEY = streamClaimKey(local);

function gateway() {
  const sent: Array<{ to: string; claims: readonly RegionClaim[] }> = [];
  const evicted: string[] = [];
  const refused: RegionClaim[] = [];
  const turns: Array<() => void> = [];
  let hear: (from: string, claims: readonly RegionClaim[]) => void = () => undefined;
  const links: RegionClaimLinks = { listen: (h) => (hear = h), announce: (to, claims) => sent.push({ to, claims }), close: () => undefined };
  const timers: Timers = { after: () => () => undefined, afterTurn: (fire) => turns.push(fire) };
  const node = new RegionClaims({ links, nodeId: 'gw-eu', others: ['us', 'ap'], timers, now: () => NOW, evict: (id) => evicted.push(id), refused: (_from, c) => refused.push(c) });
  node.start();
  node.claimed(local);
  const endTurn = (): void => {
    for (const fire of turns.splice(0)) fire();
  };
  endTurn();
  sent.length = 0;
  return { hear: (from: string, claims: readonly RegionClaim[]) => hear(from, claims), sent, evicted, refused, endTurn };
}

const remote = (openedAt: number, conn = 'theirs'): RegionClaim => ({ key: KEY, conn, node: 'gw-us', openedAt });

describe('a gateway hearing claims of other regions', () => {
  it('evicts its stream for a newer open in another region', () => {
    const g = gateway();
    g.hear('us', [remote(NOW - 1_000)]);
    expect(g.evicted).toEqual(['mine']);
  });

  it('ignores, and reports, a claim opened further in the future than clocks can disagree, so a forged or skewed claim cannot evict a player', () => {
    const g = gateway();
    g.hear('us', [remote(NOW + MAX_CLOCK_AHEAD_MS + 1), remote(Number.MAX_VALUE, 'other')]);
    expect(g.evicted).toEqual([]);
    expect(g.refused.map((c) => c.conn)).toEqual(['theirs', 'other']);
    g.hear('us', [remote(NOW + MAX_CLOCK_AHEAD_MS - 1)]);
    expect(g.evicted).toEqual(['mine']);
  });

  it('acts on nothing said as its own region or a region the mesh does not have', () => {
    const g = gateway();
    g.hear('eu', [remote(NOW)]);
    g.hear('mars', [remote(NOW)]);
    g.endTurn();
    expect(g.evicted).toEqual([]);
    expect(g.sent).toEqual([]);
  });

  it('answers a message of many older claims of one key with its own claim once, not once per claim', () => {
    const g = gateway();
    g.hear('us', Array.from({ length: 20_000 }, (_, i) => remote(NOW - 10_000, `old-${i}`)));
    g.endTurn();
    expect(g.sent).toEqual([{ to: 'us', claims: [expect.objectContaining({ conn: 'mine' })] }]);
  });
});

describe('announcements on the wire', () => {
  const claims = Array.from({ length: 3_000 }, (_, i): RegionClaim => ({ key: `${KEY}-${i}`, conn: `conn-${i}`, node: 'gw-eu', openedAt: NOW + i }));

  it('are split to stay within the size asked, and read back whole', () => {
    const messages = encodeAnnouncements(claims, 16 * 1024);
    expect(messages.length).toBeGreaterThan(1);
    for (const m of messages) expect(Buffer.byteLength(m)).toBeLessThanOrEqual(16 * 1024);
    expect(messages.flatMap((m) => parseAnnouncement(m) ?? [])).toEqual(claims);
  });

  it('pass over what is not an announcement, and entries of the wrong shape', () => {
    for (const text of ['', 'null', '[]', '{"claims":{}}', '{"claims":"x"}', '{']) expect(parseAnnouncement(text), text).toBeNull();
    expect(parseAnnouncement('{"claims":[["k","c","n",1],["k","c","n"],["k","c","n","1"],["k",1,"n",1],null,["k","c","n",1e999]]}')).toEqual([{ key: 'k', conn: 'c', node: 'n', openedAt: 1 }]);
  });
});
