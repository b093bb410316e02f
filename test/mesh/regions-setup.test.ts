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

it('waits for a region whose servers are shut down, says so, and lays it out once they are back', async () => {
  await sc.shutDown('b');
  const restarts: Array<Promise<void>> = [];
  const setup = await runCli(['setup'], { NATS_URL: sc.region('c').url, ...MESH }, 120_000, (stderr) => {
    if (restarts.length === 0 && stderr.includes('waits for region b: JetStream sees its servers offline')) restarts.push(sc.restart('b'));
  });
  await Promise.all(restarts);
  expect(restarts, 'setup never said it waits for region b').toHaveLength(1);
  expect(setup.code, setup.stderr).toBe(0);
  const nc = await connect({ servers: sc.region('c').url });
  try {
    const jsm = await jetstreamManager(nc, { checkAPI: false });
    expect((await jsm.streams.info('RELAY_REGION_B')).cluster?.name).toBe('b');
    expect((await jsm.streams.info('KV_relay-bans-b')).cluster?.name).toBe('b');
  } finally {
    await nc.close();
  }
}, 180_000);
