// relay streams: who holds which stream on which node (KV relay-streams; with regions, each region's).
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
      const [{ withAdmin }, { channelArg }, { KvMirror }, { parseStreamClaim }, { claimsBucket }] = await Promise.all([
        import('../admin.js'),
        import('../args.js'),
        import('../../core/kv-mirror.js'),
        import('../../core/records.js'),
        import('../../core/subjects.js'),
      ]);
      // Lower-casing alone (below) missed "play.example.net." and ":25565" and said "No streams open".
      if (opts.channel !== undefined) opts.channel = channelArg(opts.channel);
      const claims = await withAdmin({}, async (admin) => {
        const regions: ReadonlyArray<string | null> = admin.config.regions?.all ?? [null];
        const lists = await Promise.all(
          regions.map(async (region) => {
            const mirror = new KvMirror(admin.nats.js, claimsBucket(region), parseStreamClaim, admin.logger);
            await mirror.start();
            const list = [...mirror.values()].map((claim) => ({ claim, region }));
            await mirror.stop();
            return list;
          }),
        );
        return lists.flat();
      });
      const shown = claims
        .filter(({ claim: c }) => opts.channel === undefined || c.channel === opts.channel.trim().toLowerCase())
        .sort(({ claim: a }, { claim: b }) => (a.channel ?? '').localeCompare(b.channel ?? '') || a.openedAt.localeCompare(b.openedAt));
      if (opts.json) return printJson(shown.map(({ claim }) => claim));
      const regional = claims.some(({ region }) => region !== null);
      printTable(
        shown.map(({ claim: c, region }) => ({
          ...(regional ? { region: region ?? '' } : {}),
          channel: c.channel ?? '(every channel)',
          account: c.uuid ?? '(bridge, no session)',
          node: c.node,
          since: c.openedAt,
          client_id: c.clientId,
        })),
        [...(regional ? ['region'] : []), 'channel', 'account', 'node', 'since', 'client_id'],
        'No streams open.',
      );
    });
}
