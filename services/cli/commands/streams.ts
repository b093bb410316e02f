// relay streams: who holds which stream on which node (KV relay-streams).
import type { Command } from 'commander';
import { printJson, printTable } from '../output.js';

export function registerStreams(program: Command): void {
  program
    .command('streams')
    .description('list open streams: account, channel, node, since when')
    .option('--json', 'print a JSON array')
    .option('--channel <name>', 'only this channel')
    .action(async (opts: { json?: boolean; channel?: string }) => {
      // Loaded when it runs: `relay --help` does not load the mesh's code.
      const [{ withAdmin }, { channelArg }, { KvMirror }, { parseStreamClaim }, { BUCKET_STREAMS }] = await Promise.all([
        import('../admin.js'),
        import('../args.js'),
        import('../../core/kv-mirror.js'),
        import('../../core/records.js'),
        import('../../core/subjects.js'),
      ]);
      // Lower-casing alone (below) missed "play.example.net." and ":25565" and said "No streams open".
      if (opts.channel !== undefined) opts.channel = channelArg(opts.channel);
      const claims = await withAdmin({}, async (admin) => {
        const mirror = new KvMirror(admin.nats.js, BUCKET_STREAMS, parseStreamClaim, admin.logger);
        await mirror.start();
        const list = [...mirror.values()];
        await mirror.stop();
        return list;
      });
      const shown = claims
        .filter((c) => opts.channel === undefined || c.channel === opts.channel.trim().toLowerCase())
        .sort((a, b) => (a.channel ?? '').localeCompare(b.channel ?? '') || a.openedAt.localeCompare(b.openedAt));
      if (opts.json) return printJson(shown);
      printTable(
        shown.map((c) => ({
          channel: c.channel ?? '(every channel)',
          account: c.uuid ?? '(bridge, no session)',
          node: c.node,
          since: c.openedAt,
          client_id: c.clientId,
        })),
        ['channel', 'account', 'node', 'since', 'client_id'],
        'No streams open.',
      );
    });
}
