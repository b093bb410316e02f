// One stream per (account, channel) across regions (services/gateway/ownership/region-claims.ts) at
// every interleaving: the real RegionClaims of one gateway per region, joined by in-memory links that
// keep each (sender, receiver) pair's messages in order as NATS does, and the explorer
// (test/helpers/interleavings/explorer.ts) takes the opens, the ends of turns (when announcements
// go out), the deliveries, a client leaving and a cut link's return in every order. The rules:
//  - a stream is evicted only by a newer open, and the newest is never evicted;
//  - once every message is delivered, at most one stream of the key is live: the newest, when no
//    client left.
import { describe, expect, it } from 'vitest';
import { describeFailure, explore, type Run, type Scenario, type Taken } from '../helpers/interleavings/explorer.js';
import { outranks, RegionClaims, type RegionClaim, type RegionClaimLinks } from '../../services/gateway/ownership/region-claims.js';
import type { ClaimedStream } from '../../services/gateway/ownership/claim-keys.js';
import type { Timers } from '../../services/core/timers.js';

interface Open {
  id: string;
  region: string;
  openedAt: number;
  /** Whether the client leaves (a step of its own, any time after its open). */
  leaves?: boolean;
}

interface Spec {
  name: string;
  regions: string[];
  opens: Open[];
  /** The links are cut until a `heal` step: messages sent meanwhile are lost. */
  cut?: boolean;
}

const ACCOUNT = '0b0e4c8e-0000-4000-8000-000000000001';

function stream(o: Open): ClaimedStream {
  return { id: o.id, account: ACCOUNT, clientId: 'c', channel: 'play.example.net', openedAt: o.openedAt };
}

function rankOf(o: Open): RegionClaim {
  return { key: 'k', conn: o.id, node: `gw-${o.region}`, openedAt: o.openedAt };
}

function build(spec: Spec): Run {
  const channels = new Map<string, Array<{ from: string; claims: readonly RegionClaim[] }>>();
  const turns = new Map<string, Array<() => void>>();
  const hearers = new Map<string, (from: string, claims: readonly RegionClaim[]) => void>();
  const opened = new Set<string>();
  const left = new Set<string>();
  const evicted = new Set<string>();
  let cut = spec.cut === true;
  const nodes = new Map<string, RegionClaims>();
  for (const region of spec.regions) {
    const links: RegionClaimLinks = {
      listen: (heard) => hearers.set(region, heard),
      announce: (to, claims) => {
        if (cut) return;
        const name = `${region}>${to}`;
        channels.set(name, [...(channels.get(name) ?? []), { from: region, claims }]);
      },
      close: () => undefined,
    };
    const timers: Timers = { after: () => () => undefined, afterTurn: (fire) => turns.set(region, [...(turns.get(region) ?? []), fire]) };
    const node = new RegionClaims({ links, nodeId: `gw-${region}`, others: spec.regions.filter((r) => r !== region), timers, evict: (id) => evicted.add(id) });
    node.start();
    nodes.set(region, node);
  }
  const everyNode = spec.regions.map((r) => `node:${r}`);
  const taken = (id: string, label: string, footprint: string[]): Taken => ({ id, label, footprint: new Set(footprint) });
  return {
    enabled: () => [
      ...spec.opens.filter((o) => !opened.has(o.id)).map((o) => ({ id: `open:${o.id}` })),
      ...spec.opens.filter((o) => o.leaves === true && opened.has(o.id) && !left.has(o.id)).map((o) => ({ id: `leave:${o.id}` })),
      ...[...turns].filter(([, fires]) => fires.length > 0).map(([r]) => ({ id: `turn:${r}` })),
      ...[...channels].filter(([, queue]) => queue.length > 0).map(([name]) => ({ id: `msg:${name}` })),
      ...(cut ? [{ id: 'heal' }] : []),
    ],
    take: (id) => {
      const [kind, what] = id.split(':') as [string, string | undefined];
      if (kind === 'open' || kind === 'leave') {
        const o = spec.opens.find((x) => x.id === what)!;
        if (kind === 'open') {
          opened.add(o.id);
          nodes.get(o.region)!.claimed(stream(o));
        } else {
          left.add(o.id);
          nodes.get(o.region)!.released(o.id);
        }
        return Promise.resolve(taken(id, `${o.id} ${kind === 'open' ? 'opens' : 'leaves'} in ${o.region}`, [`node:${o.region}`]));
      }
      if (kind === 'turn') {
        const fires = turns.get(what!)!.splice(0);
        for (const fire of fires) fire();
        return Promise.resolve(taken(id, `${what} sends what its turn queued`, [`node:${what}`, ...spec.regions.map((r) => `chan:${what}>${r}`)]));
      }
      if (kind === 'msg') {
        const [from, to] = what!.split('>') as [string, string];
        const m = channels.get(what!)!.shift()!;
        hearers.get(to)!(m.from, m.claims);
        return Promise.resolve(taken(id, `${to} hears ${from}'s ${m.claims.map((c) => c.conn).join(', ')}`, [`node:${to}`, `chan:${what}`]));
      }
      cut = false;
      for (const [region, node] of nodes) for (const other of spec.regions) if (other !== region) node.returned(other);
      return Promise.resolve(taken(id, 'the links return', everyNode));
    },
    afterStep: () =>
      spec.opens
        .filter((o) => evicted.has(o.id) && !spec.opens.some((n) => opened.has(n.id) && outranks(rankOf(n), rankOf(o))))
        .map((o) => `${o.id} was evicted, though no newer stream opened`),
    atEnd: () => {
      const live = spec.opens.filter((o) => !left.has(o.id) && !evicted.has(o.id)).map((o) => o.id);
      if (live.length > 1) return Promise.resolve([`${live.join(' and ')} are both live at the end`]);
      const newest = newestOf(spec.opens);
      if (!spec.opens.some((o) => o.leaves === true) && live[0] !== newest.id) return Promise.resolve([`live at the end: [${live.join(', ')}], expected the newest, ${newest.id}`]);
      return Promise.resolve([]);
    },
  };
}

function newestOf(opens: readonly Open[]): Open {
  return opens.reduce((best, o) => (outranks(rankOf(o), rankOf(best)) ? o : best));
}

const specs: Spec[] = [
  { name: 'two regions, the later open newer', regions: ['eu', 'us'], opens: [{ id: 'eu1', region: 'eu', openedAt: 1000 }, { id: 'us1', region: 'us', openedAt: 2000 }] },
  { name: 'two regions, opened in the same millisecond (the node decides)', regions: ['eu', 'us'], opens: [{ id: 'eu1', region: 'eu', openedAt: 1000 }, { id: 'us1', region: 'us', openedAt: 1000 }] },
  {
    name: 'three regions, three opens',
    regions: ['ap', 'eu', 'us'],
    opens: [{ id: 'ap1', region: 'ap', openedAt: 3000 }, { id: 'eu1', region: 'eu', openedAt: 1000 }, { id: 'us1', region: 'us', openedAt: 2000 }],
  },
  { name: 'two regions, the newer client leaves at any moment', regions: ['eu', 'us'], opens: [{ id: 'eu1', region: 'eu', openedAt: 1000 }, { id: 'us1', region: 'us', openedAt: 2000, leaves: true }] },
  { name: 'two regions, both opened while the link is cut, then it returns', regions: ['eu', 'us'], cut: true, opens: [{ id: 'eu1', region: 'eu', openedAt: 2000 }, { id: 'us1', region: 'us', openedAt: 1000 }] },
];

describe('one stream per (account, channel) across regions, at every interleaving', () => {
  for (const spec of specs) it(spec.name, async () => {
    const s: Scenario = { name: spec.name, build: () => Promise.resolve(build(spec)), budget: 200_000 };
    const searched = await explore(s);
    if (searched.failure !== undefined) expect.fail(describeFailure(s, searched.failure));
    expect(searched.exhaustive, 'every schedule was run').toBe(true);
    expect(searched.schedules).toBeGreaterThan(1);
  });
});
