// relay stats: the event log's size, retention and per-channel message counts.
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

export function registerStats(program: Command): void {
  program
    .command('stats')
    .description("the event log: size, retention, first and last sequence, messages per channel")
    .option('--json', 'print one JSON object')
    .action(async (opts: { json?: boolean }) => {
      // Loaded when it runs: `relay --help` does not load the mesh's code.
      const [{ withAdmin }, { millis }, { channelFromToken }, { CHANNEL_SUBJECT_PREFIX, STREAM_NAME, STREAM_SUBJECTS }] = await Promise.all([
        import('../admin.js'),
        import('@nats-io/nats-core'),
        import('../../core/channel.js'),
        import('../../core/subjects.js'),
      ]);
      const result = await withAdmin({ readsOneLog: 'relay stats' }, async (admin) => {
        const info = await admin.nats.jsm.streams.info(STREAM_NAME, { subjects_filter: STREAM_SUBJECTS });
        const subjects = info.state.subjects ?? {};
        const channels = Object.entries(subjects)
          .map(([subject, messages]) => ({ channel: channelFromToken(subject.slice(CHANNEL_SUBJECT_PREFIX.length)), messages }))
          .sort((a, b) => b.messages - a.messages);
        const c = info.config;
        return {
          stream: STREAM_NAME,
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
      });
      if (opts.json) return printJson(result);
      const r = result.retention;
      process.stdout.write(
        [
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
    });
}
