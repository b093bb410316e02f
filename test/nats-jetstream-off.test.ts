// A relay that starts while the NATS server it reaches has no JetStream (a cluster node turns it off
// when its store fills up) connects again until it reaches one that has it, instead of exiting.
// The fault campaign (docs/RELIABILITY.md, seed 2027) restarted a gateway while one node's disk was
// full: it exited at once with "jetstream is not enabled", twice, where a supervisor would have
// kept restarting it until the disk was freed.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startRelayServer, type RelayServer } from '../services/server.js';
import { findNatsServer, startNatsNode, type NatsNode } from '../tools/nats-launcher.js';
import { waitUntil } from '../tools/poll.js';
import { freePort, portFree } from '../tools/ports.js';
import { setUpNats } from './helpers/nats-setup.js';
import { LogCapture } from './helpers/relay.js';

const dir = mkdtempSync(join(tmpdir(), 'relay-js-off-'));
let withJetStream: NatsNode | null = null;
let withoutJetStream: ChildProcess | null = null;
let relay: RelayServer | null = null;

afterAll(async () => {
  await relay?.close();
  await withJetStream?.stop();
  withoutJetStream?.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

describe('a NATS server without JetStream at start-up', () => {
  it('an ingress that reaches it first waits for a server with JetStream and starts there, rather than exiting', async () => {
    // The server with JetStream is set up as an operator would, then stopped until the relay has
    // met the one without: only then is there another to reach.
    const storeDir = join(dir, 'store');
    const first = await startNatsNode({ storeDir });
    await setUpNats(first.url);
    const { port, monitorPort } = first;
    await first.stop();

    const offPort = await freePort();
    withoutJetStream = spawn(findNatsServer(), ['-a', '127.0.0.1', '-p', String(offPort)], { stdio: 'ignore' });
    await waitUntil(async () => !(await portFree(offPort)), 'the server without JetStream to listen', 10_000);

    const logs = new LogCapture();
    const starting = startRelayServer({
      service: 'ingress',
      env: {
        NATS_URL: `nats://127.0.0.1:${offPort},nats://127.0.0.1:${port}`,
        PROFILE_API_URL: 'offline',
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'info',
        LOG_PRETTY: 'false',
        NODE_ENV: 'test',
      },
      logDestination: logs,
    });
    let failed: unknown = null;
    starting.catch((e: unknown) => (failed = e));
    await waitUntil(() => failed !== null || logs.text.includes('JetStream does not answer on the NATS server reached'), 'the ingress to meet the server without JetStream', 20_000);
    expect(failed).toBeNull();

    withJetStream = await startNatsNode({ storeDir, port, monitorPort });
    relay = await starting;
    expect(relay.core.nats.nc.getServer()).toBe(`127.0.0.1:${port}`);
    const ready = await fetch(`${relay.url}/readyz`);
    expect(ready.status).toBe(200);
  }, 90_000);
});
