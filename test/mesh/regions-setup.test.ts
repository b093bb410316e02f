// `relay setup` run while a region's servers are down or just starting: JetStream knows them but sees
// them offline, and refuses to place that region's streams ("peer offline") until their first
// statistics arrive. Setup waits for them, and says so, rather than failing the deployment's first
// step (CI saw the refusal right after a super-cluster started).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSuperCluster, type SuperCluster } from '../../tools/nats-super-cluster.js';
import { runCli } from '../helpers/cli.js';

const MESH = { REGIONS: 'a,b,c', REGION_HOME: 'a' };
let dir: string;
let sc: SuperCluster;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'relay-regions-setup-'));
  sc = await startSuperCluster(dir, ['a', 'b', 'c']);
}, 180_000);

afterAll(async () => {
  await sc?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A region other than c (setup's) whose server is not JetStream's meta leader: shut down, it leaves the meta group a leader. */
async function notLeading(): Promise<string> {
  const jsz = (await (await fetch(`http://127.0.0.1:${sc.region('c').nodes[0]!.monitorPort}/jsz`)).json()) as { meta_cluster?: { leader?: string } };
  const leader = jsz.meta_cluster?.leader ?? '';
  const names = await Promise.all(['a', 'b'].map(async (r) => [r, ((await (await fetch(`http://127.0.0.1:${sc.region(r).nodes[0]!.monitorPort}/varz`)).json()) as { server_name: string }).server_name] as const));
  return names.find(([, name]) => name !== leader)![0];
}

it('waits for a region whose servers are shut down, says so, and lays it out once they are back', async () => {
  const down = await notLeading();
  await sc.shutDown(down);
  const restarts: Array<Promise<void>> = [];
  const setup = await runCli(['setup'], { NATS_URL: sc.region('c').url, ...MESH }, 120_000, (stderr) => {
    if (restarts.length > 0 || !stderr.includes(`waits for region ${down}: JetStream sees its servers offline`)) return;
    const restarted = sc.restart(down);
    restarted.catch(() => undefined);
    restarts.push(restarted);
  });
  await Promise.all(restarts);
  expect(restarts, `setup never said it waits for region ${down}`).toHaveLength(1);
  expect(setup.code, setup.stderr).toBe(0);
  const nc = await connect({ servers: sc.region('c').url });
  try {
    const jsm = await jetstreamManager(nc, { checkAPI: false });
    expect((await jsm.streams.info(`RELAY_REGION_${down.toUpperCase()}`)).cluster?.name).toBe(down);
    expect((await jsm.streams.info(`KV_relay-bans-${down}`)).cluster?.name).toBe(down);
  } finally {
    await nc.close();
  }
}, 180_000);
