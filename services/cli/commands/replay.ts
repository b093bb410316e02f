// relay replay <channel> and relay tail: read the event log, optionally following it live. What they
// do is in read-log.ts, loaded when one runs: `relay --help` does not load the mesh's code.
import type { Command } from 'commander';
import type { ReadOptions } from '../read-log.js';

function addReadOptions(cmd: Command): Command {
  return cmd
    .option('--since <when>', 'start this long ago (10m, 2h, 7d) or at an ISO 8601 date or time (2030-01-31T12:00:00Z)')
    .option('--from-seq <n>', 'start at this stream sequence')
    .option('--follow', 'after what is stored, keep printing new payloads until Ctrl-C')
    .option('--type <types>', 'only these payload types (comma-separated)')
    .option('--sender <uuid>', 'only payloads sent by (or re-attributed to) this account')
    .option('--limit <n>', 'stop after printing this many')
    .option('--json', 'one {"seq","time","meta","data"} object per line, for jq');
}

export function registerReplay(program: Command): void {
  addReadOptions(
    program
      .command('replay')
      .description("print a channel's stored payloads (time, sequence, sender, agent, type, summary)")
      .argument('<channel>', 'the multiplayer server host, as clients name it'),
  ).action(async (channel: string, opts: ReadOptions) => {
    await (await import('../read-log.js')).replayChannel(channel, opts);
  });

  addReadOptions(program.command('tail').description('every channel, live from now (or from --since/--from-seq)')).action(
    async (opts: ReadOptions) => {
      await (await import('../read-log.js')).tailAll(opts);
    },
  );
}
