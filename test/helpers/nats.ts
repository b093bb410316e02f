// The one way tests get a nats-server. With a container engine (developer laptops with Docker) it is
// testcontainers' NATS module; without one (CI here) the local binary on a free port with a
// temporary store. Detection fails within milliseconds when no engine answers.

import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNatsCluster, startNatsNode, type NatsCluster, type NatsNode } from '../../tools/nats-launcher.js';
import { waitUntil } from '../../tools/poll.js';

export interface TestNats {
  url: string;
  /** How it was started, for the test log. */
  via: 'testcontainers' | 'local-binary';
  stop(): Promise<void>;
  /** The local process, when there is one (fault tests kill it). */
  node?: NatsNode;
}

async function containerEngineAnswers(): Promise<boolean> {
  if (process.env['RELAY_TEST_NO_CONTAINERS'] === '1') return false;
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

export async function startTestNats(): Promise<TestNats> {
  if (await containerEngineAnswers()) {
    const { NatsContainer } = await import('@testcontainers/nats');
    const container = await new NatsContainer('nats:2.9').withJetStream().start();
    const { servers } = container.getConnectionOptions() as { servers: string };
    return { url: servers, via: 'testcontainers', stop: async () => void (await container.stop()) };
  }
  const dir = mkdtempSync(join(tmpdir(), 'relay-nats-'));
  const node = await startNatsNode({ storeDir: dir });
  return {
    url: node.url,
    via: 'local-binary',
    node,
    async stop() {
      await node.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Three clustered nodes on loopback (local binary only: the mesh tests need to kill processes). */
export async function startTestCluster(): Promise<NatsCluster & { dir: string; remove(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'relay-cluster-'));
  const cluster = await startNatsCluster(dir);
  return Object.assign(cluster, {
    dir,
    async remove() {
      await cluster.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  });
}

/**
 * Freezes a nats-server (SIGSTOP) and returns once the kernel reports every one of its threads
 * stopped: a signal is delivered asynchronously, and on a loaded or sandboxed machine the server
 * could still answer a message sent just after kill() returned. Returns the thaw.
 */
export function freeze(node: NatsNode): Promise<() => void> {
  return freezeProcess(node.process);
}

/** Freezes any child process (a relay, say) the same way; returns the thaw. */
export async function freezeProcess(child: ChildProcess): Promise<() => void> {
  const pid = child.pid;
  if (pid === undefined) throw new Error('the process has no process id');
  child.kill('SIGSTOP');
  const thaw = (): void => void child.kill('SIGCONT');
  try {
    await waitUntil(() => everyThreadStopped(pid), `process ${pid} to stop`, 5000);
  } catch (e) {
    thaw();
    throw e;
  }
  return thaw;
}

function everyThreadStopped(pid: number): boolean {
  const tasks = readdirSync(`/proc/${pid}/task`);
  // The state is the field after the parenthesised command name: T (stopped) or t (traced).
  return tasks.length > 0 && tasks.every((t) => /\)\s+[Tt]\s/.test(readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8')));
}
