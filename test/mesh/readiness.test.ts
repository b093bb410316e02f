// /readyz says whether a relay can do its work, not only whether it is connected. The fault
// campaign (docs/RELIABILITY.md) saw every relay answer 200 for seconds while the event log had no
// leader and JetStream no meta leader: a load balancer kept sending POSTs that could only fail and
// resumes that could not be read. Here two of three NATS nodes go, the survivor keeps the relays
// connected, and they must say they are not ready until the quorum is back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../tools/poll.js';
import type { RelayProcess } from '../../tools/relay-process.js';
import { Mesh } from '../helpers/mesh.js';

let mesh: Mesh;

beforeAll(async () => {
  mesh = await Mesh.start({ gateways: 1, ingresses: 1 });
});
afterAll(async () => {
  await mesh?.close();
});

async function readiness(p: RelayProcess): Promise<{ status: number; failing: string[] }> {
  const res = await fetch(`${p.url}/readyz`);
  const body = (await res.json()) as { failing?: string[] };
  return { status: res.status, failing: body.failing ?? [] };
}

describe('readiness under a lost NATS quorum', () => {
  it('a relay still connected to NATS says not ready while the log and JetStream have no leader, and ready once they have', async () => {
    const [gateway, ingress] = [mesh.gateways[0]!, mesh.ingresses[0]!];
    expect((await readiness(gateway)).status).toBe(200);
    expect((await readiness(ingress)).status).toBe(200);

    await Promise.all([mesh.cluster.nodes[0]!.kill(), mesh.cluster.nodes[1]!.kill()]);
    // Connected (to the node that is left), yet not ready: the connection is not what they report.
    // The survivor notices the lost log leader and the lost meta leader at different moments (a CI
    // run saw a gateway say 'log' before 'jetstream'): each relay is waited for until it names all
    // that it will, then what it names is checked.
    const unready = (p: RelayProcess, names: string[]): Promise<{ failing: string[] }> =>
      waitUntil(async () => {
        const r = await readiness(p);
        return r.status === 503 && names.every((n) => r.failing.includes(n)) && !r.failing.includes('nats') && r;
      }, `${p.nodeId} to say, connected, that ${names.join(' and ')} have no leader`, 30_000);
    const gatewayDown = await unready(gateway, ['log', 'jetstream']);
    const ingressDown = await unready(ingress, ['log']);
    // A gateway cannot make the consumer a resume reads with; an ingress makes none.
    expect(gatewayDown.failing).toContain('jetstream');
    expect(ingressDown.failing).not.toContain('jetstream');

    await Promise.all([mesh.cluster.restart(0), mesh.cluster.restart(1)]);
    for (const p of [gateway, ingress]) {
      await waitUntil(async () => (await readiness(p)).status === 200, `${p.nodeId} to be ready again`, 60_000);
    }
  });
});
