// relay stats: the event log's size, retention and per-channel message counts; with regions, each
// region's log as the home region holds it (core/operator-logs.ts).
import type { Command } from 'commander';
import { escapeControlChars } from '../../core/display.js';
import { printJson, printTable } from '../output.js';

function human(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

function duration(ms: number): string {
  if (ms === 0) return 'unlimited';
  const h = ms / 3_600_000;
  return h >= 24 && h % 24 === 0 ? `${h / 24}d` : h >= 1 ? `${h}h` : `${ms / 60_000}m`;
}

interface LogStats {
  region?: string;
  stream: string;
  messages: number;
  bytes: number;
  firstSeq: number;
  lastSeq: number;
  firstTime: string;
  lastTime: string;
  retention: { maxAgeMs: number; maxBytes: number; replicas: number; storage: string };
  cluster: { leader: string | null; replicas: Array<{ name: string; current: boolean }> } | null;
  channels: Array<{ channel: string; messages: number }>;
}

export function registerStats(program: Command): void {
  program
    .command('stats')
    .description('the event log (with regions, each region\'s): size, retention, first and last sequence, messages per channel')
    .option('--json', 'print one JSON object (with regions: {"regions": [one per region]})')
    .action(async (opts: { json?: boolean }) => {
      // Loaded when it runs: `relay --help` does not load the mesh's code.
      const [{ withAdmin }, { millis }, { channelFromToken }, { CHANNEL_SUBJECT_PREFIX, STREAM_SUBJECTS }, { operatorLogs }] = await Promise.all([
        import('../admin.js'),
        import('@nats-io/nats-core'),
        import('../../core/channel.js'),
        import('../../core/subjects.js'),
        import('../../core/operator-logs.js'),
      ]);
      const results = await withAdmin({}, async (admin) =>
        Promise.all(
          // With regions, each region's log as the home region holds it (core/operator-logs.ts).
          operatorLogs(admin.config.regions).map(async (log): Promise<LogStats> => {
            const info = await admin.nats.jsm.streams.info(log.stream, { subjects_filter: log.subject(STREAM_SUBJECTS) });
            const prefix = log.subject(CHANNEL_SUBJECT_PREFIX);
            const channels = Object.entries(info.state.subjects ?? {})
              .map(([subject, messages]) => ({ channel: channelFromToken(subject.slice(prefix.length)), messages }))
              .sort((a, b) => b.messages - a.messages);
            const c = info.config;
            return {
              ...(log.region === null ? {} : { region: log.region }),
              stream: log.stream,
              messages: info.state.messages,
              bytes: info.state.bytes,
              firstSeq: info.state.first_seq,
              lastSeq: info.state.last_seq,
              firstTime: info.state.first_ts,
              lastTime: info.state.last_ts,
              retention: { maxAgeMs: millis(c.max_age), maxBytes: c.max_bytes, replicas: c.num_replicas, storage: c.storage },
              cluster: info.cluster ? { leader: info.cluster.leader ?? null, replicas: (info.cluster.replicas ?? []).map((r) => ({ name: r.name, current: r.current })) } : null,
              channels,
            };
          }),
        ),
      );
      const regional = results.some((r) => r.region !== undefined);
      if (opts.json) return printJson(regional ? { regions: results } : results[0]);
      for (const result of results) printStats(result);
    });
}

function printStats(result: LogStats): void {
  const r = result.retention;
  process.stdout.write(
    [
      ...(result.region === undefined ? [] : [`region ${result.region}:`]),
      `stream ${result.stream}: ${result.messages.toLocaleString('en-US')} messages, ${human(result.bytes)}, sequences ${result.firstSeq} to ${result.lastSeq}`,
      `retention: max age ${duration(r.maxAgeMs)}, max size ${r.maxBytes < 0 ? 'unlimited' : human(r.maxBytes)}, ${r.replicas} replica(s), ${r.storage} storage`,
      result.messages > 0 ? `oldest kept: ${result.firstTime}; newest: ${result.lastTime}` : 'nothing stored yet',
      ...(result.cluster ? [escapeControlChars(`leader: ${result.cluster.leader ?? 'none'}; replicas: ${result.cluster.replicas.map((x) => `${x.name}${x.current ? '' : ' (behind)'}`).join(', ') || 'none'}`)] : []),
      '',
    ].join('\n'),
  );
  printTable(
    result.channels.map((ch) => ({ channel: ch.channel, messages: ch.messages.toLocaleString('en-US') })),
    ['channel', 'messages'],
    'No channel has stored messages.',
  );
  if (result.region !== undefined) process.stdout.write('\n');
}
