// relay streams: who holds which stream on which node (KV relay-streams).
import type { Command } from 'commander';
import { KvMirror } from '../../core/kv-mirror.js';
import { parseStreamClaim } from '../../core/records.js';
import { BUCKET_STREAMS } from '../../core/subjects.js';
import { withAdmin } from '../admin.js';
import { channelArg } from '../args.js';
import { printJson, printTable } from '../output.js';

export function registerStreams(program: Command): void {
  program
    .command('streams')
    .description('list open streams: account, channel, node, since when')
    .option('--json', 'print a JSON array')
    .option('--channel <name>', 'only this channel')
    .action(async (opts: { json?: boolean; channel?: string }) => {
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
