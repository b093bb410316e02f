// Which guarantee an acknowledged POST has on the NATS a process reached, in one sentence: logged at
// every start and printed by `relay config check`. docs/OPERATIONS.md "What an acknowledged POST
// survives" has the table by fault this sentence is read from.

import { StorageType, type StreamInfo } from '@nats-io/jetstream';

export interface DurabilityFacts {
  /** nats-server's version, as the server announced it. */
  serverVersion: string;
  logReplicas: number;
  logStorage: StorageType;
  /** The fewest replicas among the buckets found (keys, bans, claims, idempotency records). */
  bucketReplicas: number | null;
}

export function durabilityFacts(serverVersion: string, log: StreamInfo, buckets: StreamInfo[]): DurabilityFacts {
  return {
    serverVersion,
    logReplicas: log.config.num_replicas,
    logStorage: log.config.storage,
    bucketReplicas: buckets.length === 0 ? null : Math.min(...buckets.map((b) => b.config.num_replicas)),
  };
}

/** nats-server before 2.10 fsyncs its files every 60 s, a fixed interval (2.10 added sync_interval). */
function fixedSync(version: string): boolean {
  const [major, minor] = version.split('.').map((n) => Number.parseInt(n, 10));
  return major === undefined || minor === undefined || Number.isNaN(minor) || major < 2 || (major === 2 && minor < 10);
}

export function durabilityStatement(f: DurabilityFacts): string {
  const where = `event log R${f.logReplicas}${f.bucketReplicas !== null ? `, buckets R${f.bucketReplicas}` : ''}, nats-server ${f.serverVersion}`;
  if (f.logStorage === StorageType.Memory) {
    return `${where}: the event log is in memory, so a restart of the NATS servers holding it loses every acknowledged POST (STREAM_STORAGE=file keeps them).`;
  }
  const syncing = fixedSync(f.serverVersion)
    ? 'what was acknowledged in the last 60 s (nats-server before 2.10 writes before it acknowledges but flushes to disk every 60 s)'
    : "what was acknowledged since the last flush to disk (the servers' sync_interval; `always` makes each acknowledgement wait for the disk)";
  // An acknowledgement means a quorum stored it: it is lost only if every node holding it loses power.
  const survives = Math.floor(f.logReplicas / 2);
  if (survives === 0) {
    return `${where}: an acknowledged POST survives a crash of any relay or nats-server process; a power loss of the NATS machine may lose ${syncing}.`;
  }
  return `${where}: an acknowledged POST survives a crash of any process and the power loss of ${survives === 1 ? 'one node' : `up to ${survives} nodes`} at once; a power loss of more at once may lose ${syncing}.`;
}
