// The interleaving scenarios (issue 27). Each starts two or three simulated gateways
// (twin-node.ts), brings them to a starting state by the quiet schedule, scripts a few actions
// (steps the explorer orders like any other), and names the races it is about: witnesses the twin
// mesh notes when a schedule reaches them, which the test requires. To add a race, add a scenario
// here (docs/ARCHITECTURE.md, "Adding a race to the interleaving tests").

import type { Scenario } from './explorer.js';
import { TwinMesh } from './twin-mesh.js';
import type { TwinNode } from './twin-node.js';

const ACCOUNT = 'acct';
const CHANNEL = 'c1';

export interface Spec {
  readonly name: string;
  /** The races (witnesses, twin-mesh.ts and twin-io.ts) at least one schedule must reach. */
  readonly reaches: readonly string[];
  /** Small enough that `npm test` runs every one of its schedules (a second or less). */
  readonly everySchedule?: boolean;
  build(mesh: TwinMesh): Promise<void>;
}

/** The explorer's view of a spec; `witnessed` collects the races its schedules reach. */
export function scenario(spec: Spec, witnessed: Set<string>, search: { budget: number; delays?: number }): Scenario {
  return {
    name: spec.name,
    ...search,
    build: async () => {
      const mesh = new TwinMesh(witnessed);
      await spec.build(mesh);
      return mesh;
    },
  };
}

/** Node `n` holds a stream on the key, its claim written and every step of that taken: a starting state. */
async function holding(mesh: TwinMesh, n: TwinNode): Promise<void> {
  n.open(n.stream(ACCOUNT, CHANNEL));
  await mesh.setUp();
}

/** Node `n` stops, past the node timeout: the others take it for dead. Returns the action's name. */
function pauses(mesh: TwinMesh, n: TwinNode): string {
  const name = `${n.id} pauses`;
  mesh.act(name, () => n.pause(), { runs: n.id, touches: ['live'] });
  return name;
}

/** Node `n` runs again once `after` is done; the others hear its heartbeat some time later. */
function wakes(mesh: TwinMesh, n: TwinNode, after: string): string {
  const name = `${n.id} wakes`;
  mesh.act(name, () => n.wake(), { touches: [`node:${n.id}`], when: () => mesh.done(after) });
  mesh.act(`the mesh hears ${n.id} again`, () => n.beat(), { touches: ['live'], when: () => mesh.done(name) });
  return name;
}

export const specs: readonly Spec[] = [
  {
    name: 'two opens at once on two nodes: one survivor, even when a notice arrives before its node hears its own write answered',
    reaches: ['a notice arrives before its node hears its own write answered'],
    build: async (mesh) => {
      const [a, b] = [mesh.node('a'), mesh.node('b')];
      mesh.act('a opens a1', () => a.open(a.stream(ACCOUNT, CHANNEL)), { runs: 'a' });
      mesh.act('b opens b1', () => b.open(b.stream(ACCOUNT, CHANNEL)), { runs: 'b' });
    },
  },
  {
    name: 'a notice arrives while the key is being read: the holder renews as another node claims its key and leaves',
    reaches: ['a replacement’s notice arrives while its key is being read'],
    build: async (mesh) => {
      const [a, b] = [mesh.node('a'), mesh.node('b')];
      await holding(mesh, a);
      mesh.act('b opens b1', () => b.open(b.stream(ACCOUNT, CHANNEL)), { runs: 'b' });
      mesh.act('b1 leaves', () => b.leave('b1'), { runs: 'b', when: () => b.streams.get('b1')?.state === 'open' });
      mesh.act('a renews', () => a.renew(), { runs: 'a' });
    },
  },
  {
    name: 'a sweep of a live node tells it: it writes its claim back, racing its renewal and a new open on a third node',
    reaches: ['a sweep’s notice arrives while its key is being read', 'a sweep’s notice arrives after its claim was written back'],
    build: async (mesh) => {
      const [a, b, c] = [mesh.node('a'), mesh.node('b'), mesh.node('c')];
      await holding(mesh, a);
      // Its heartbeat late (a loaded host), not paused: it runs all along.
      mesh.act('a is taken for dead', () => mesh.takenForDead.add('a'), { touches: ['live'] });
      mesh.act('b sweeps a', () => b.sweep('a'), { runs: 'b', when: () => mesh.done('a is taken for dead') });
      mesh.act('a renews', () => a.renew(), { runs: 'a', when: () => mesh.done('b sweeps a') });
      mesh.act('c opens c1', () => c.open(c.stream(ACCOUNT, CHANNEL)), { runs: 'c', when: () => mesh.done('b sweeps a') });
      mesh.act('the mesh hears a again', () => a.beat(), { touches: ['live'], when: () => mesh.done('c opens c1') });
    },
  },
  {
    name: 'a node paused while its claim is written is swept, and hears the sweep’s notice before its write’s answer',
    reaches: ['a sweep’s notice arrives before its node hears its own write answered'],
    build: async (mesh) => {
      const [a, b] = [mesh.node('a'), mesh.node('b')];
      mesh.act('a opens a1', () => a.open(a.stream(ACCOUNT, CHANNEL)), { runs: 'a' });
      const paused = pauses(mesh, a);
      mesh.act('b sweeps a', () => b.sweep('a'), { runs: 'b', when: () => mesh.done(paused) });
      wakes(mesh, a, 'b sweeps a');
    },
  },
  {
    name: 'a release during a renewal',
    reaches: ['a stream ends while its claim is being renewed'],
    everySchedule: true,
    build: async (mesh) => {
      const a = mesh.node('a');
      await holding(mesh, a);
      mesh.act('a renews', () => a.renew(), { runs: 'a' });
      mesh.act('a1 leaves', () => a.leave('a1'), { runs: 'a' });
    },
  },
  {
    name: 'a stream ends while its claim is written, and the client reopens on the same node',
    reaches: ['a stream ends while its claim is being written'],
    build: async (mesh) => {
      const a = mesh.node('a');
      mesh.act('a opens a1', () => a.open(a.stream(ACCOUNT, CHANNEL)), { runs: 'a' });
      mesh.act('a1 leaves', () => a.leave('a1'), { runs: 'a', when: () => mesh.done('a opens a1') });
      mesh.act('a opens a2', () => a.open(a.stream(ACCOUNT, CHANNEL)), { runs: 'a', when: () => mesh.done('a opens a1') });
    },
  },
  {
    name: 'two opens on two nodes with a sweep of a crashed holder between',
    reaches: ['a sweep finds the key claimed again since it read it'],
    build: async (mesh) => {
      const [a, b, c] = [mesh.node('a'), mesh.node('b'), mesh.node('c')];
      await holding(mesh, c);
      c.crash();
      mesh.act('a opens a1', () => a.open(a.stream(ACCOUNT, CHANNEL)), { runs: 'a' });
      mesh.act('a sweeps c', () => a.sweep('c'), { runs: 'a', when: () => mesh.done('a opens a1') });
      mesh.act('b opens b1', () => b.open(b.stream(ACCOUNT, CHANNEL)), { runs: 'b', when: () => mesh.done('a sweeps c') });
    },
  },
  {
    name: 'a node crashes while its claim is written; another node opens and sweeps it: one survivor, counted once',
    reaches: ['a node crashes with a claim write in flight'],
    build: async (mesh) => {
      const [a, b] = [mesh.node('a'), mesh.node('b')];
      mesh.act('a opens a1', () => a.open(a.stream(ACCOUNT, CHANNEL)), { runs: 'a' });
      mesh.act('a crashes', () => a.crash(), { runs: 'a', touches: ['live'], when: () => mesh.done('a opens a1') });
      mesh.act('b opens b1', () => b.open(b.stream(ACCOUNT, CHANNEL)), { runs: 'b', when: () => mesh.done('a crashes') });
      mesh.act('b sweeps a', () => b.sweep('a'), { runs: 'b', when: () => mesh.done('a crashes') });
    },
  },
  {
    name: 'a node paused past its claims’ TTL wakes after another took them',
    reaches: ['a paused node wakes after another took its key'],
    build: async (mesh) => {
      const [a, b] = [mesh.node('a'), mesh.node('b')];
      await holding(mesh, a);
      const paused = pauses(mesh, a);
      mesh.act('a’s claims age out', () => mesh.claims.ageOut((c) => c.node === 'a'), { touches: ['key:*'], when: () => mesh.done(paused) });
      mesh.act('b opens b1', () => b.open(b.stream(ACCOUNT, CHANNEL)), { runs: 'b', when: () => mesh.done('a’s claims age out') });
      const woken = wakes(mesh, a, 'b opens b1');
      mesh.act('a renews', () => a.renew(), { runs: 'a', when: () => mesh.done(woken) });
    },
  },
  {
    name: 'a node paused past the node timeout is swept, wakes and writes its claim back',
    reaches: ['a paused node wakes to find its claim swept'],
    build: async (mesh) => {
      const [a, b] = [mesh.node('a'), mesh.node('b')];
      await holding(mesh, a);
      const paused = pauses(mesh, a);
      mesh.act('b sweeps a', () => b.sweep('a'), { runs: 'b', when: () => mesh.done(paused) });
      wakes(mesh, a, 'b sweeps a');
    },
  },
];
