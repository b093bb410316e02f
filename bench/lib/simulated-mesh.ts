// The scale scenario's simulated million (`--million`): bench/tools/claim-writer.ts writes the
// claims of the streams other gateways of a million-stream mesh would hold, and renews them at
// their rate, while the real gateways hold theirs; and the claim traffic that reaches each real
// gateway, read from its own counter.

import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { LOG_DIR, startProc } from './procs.js';

const WRITER = fileURLToPath(new URL('../tools/claim-writer.ts', import.meta.url));
/** The rest of the mesh: a million streams, 100,000 of them real. */
export const SIMULATED_CLAIMS = 900_000;
/** The gateways a million streams would take here (one per ~16,667 streams, as the real ones). */
export const SIMULATED_GATEWAYS = 60;

export interface SimulatedMesh {
  pid: number;
  /** Seconds the writer took to write every claim once. */
  writtenInSeconds: number;
  stop(): Promise<void>;
}

/** Starts the writer and resolves once every simulated claim is in the bucket (it then renews them). */
export async function startSimulatedMesh(natsUrl: string, claims = SIMULATED_CLAIMS, claimTtl = '1h'): Promise<SimulatedMesh> {
  const args = ['--import', 'tsx', WRITER, '--claims', String(claims), '--gateways', String(SIMULATED_GATEWAYS), '--claim-ttl', claimTtl, '--nats', natsUrl];
  const proc = startProc('claim-writer', process.execPath, args);
  // Its output also goes to bench/results/logs/claim-writer.log (startProc).
  const lines = createInterface({ input: proc.child.stdout! });
  const writtenInSeconds = await new Promise<number>((resolve, reject) => {
    lines.on('line', (line) => {
      const m = /claims written in ([\d.]+) s/.exec(line);
      if (m !== null) resolve(Number(m[1]));
    });
    proc.child.once('exit', () => reject(new Error(`claim-writer exited before writing its claims (see ${join(LOG_DIR, 'claim-writer.log')})`)));
  });
  return { pid: proc.pid, writtenInSeconds, stop: () => proc.stop() };
}

/** Each gateway's relay_claim_messages_received_total (the claim notices it heard: evictions and sweeps of its claims). */
export async function claimMessagesReceived(gatewayPorts: number[]): Promise<number[]> {
  return Promise.all(
    gatewayPorts.map(async (port) => {
      const text = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text());
      const m = /^relay_claim_messages_received_total(?:\{[^}]*\})? (\d+(?:\.\d+)?(?:e[+-]?\d+)?)$/m.exec(text);
      return m === null ? NaN : Number(m[1]);
    }),
  );
}
