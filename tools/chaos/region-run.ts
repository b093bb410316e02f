// `npm run chaos -- --regions N`: the region campaign run from the command line (main.ts reads the
// options): runs it, prints and writes the report, and exits 1 on any anomaly, 2 when it could not run.

import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { runRegionCampaign } from './region-campaign.js';
import { buildRegionReport, formatRegionReport, writeRegionReport } from './region-report.js';
import type { RegionFaultKind } from './region-schedule.js';

export interface RegionRunOptions {
  seed: number;
  minutes: number;
  outDir: string;
  regions: readonly string[];
  command: string;
  startedAt: string;
  natsVersion: string;
  kinds?: readonly RegionFaultKind[];
  natsServer?: string;
  signal: AbortSignal;
  say: (line: string) => void;
}

export async function runRegionsFromCli(o: RegionRunOptions): Promise<never> {
  try {
    const result = await runRegionCampaign({
      seed: o.seed,
      minutes: o.minutes,
      outDir: o.outDir,
      regions: o.regions,
      channels: 2,
      // On two loaded cores with three nats-servers and six relays: about 30 POSTs a second.
      writersPerRegion: 2,
      readersPerRegion: 2,
      pace: [40, 120],
      moveEvery: [6000, 15_000],
      takeovers: 2,
      // Of each region's two writers, the second fails over to the next region when its own refuses or does not answer.
      failOverWriters: 1,
      ...(o.kinds !== undefined ? { kinds: o.kinds } : {}),
      ...(o.natsServer !== undefined ? { natsServer: o.natsServer } : {}),
      signal: o.signal,
      say: o.say,
    });
    const report = buildRegionReport({ seed: o.seed, minutes: o.minutes, command: o.command, startedAt: o.startedAt, outDir: o.outDir, natsVersion: o.natsVersion, regions: o.regions }, result);
    const file = writeRegionReport(report, result);
    process.stdout.write(formatRegionReport(report, file) + '\n');
    // The regions' stores are kept for a look by hand only when there is something to look at.
    if (report.anomalies.total === 0) rmSync(join(o.outDir, 'nats'), { recursive: true, force: true });
    process.exit(report.anomalies.total === 0 ? 0 : 1);
  } catch (e) {
    process.stderr.write(`chaos: the region campaign could not run: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(2);
  }
}
