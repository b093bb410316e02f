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
      const unread: string[] = [];
      const claims = await withAdmin({}, async (admin) => {
        const regions: ReadonlyArray<string | null> = admin.config.regions?.all ?? [null];
        const lists = await Promise.all(
          regions.map(async (region) => {
            const mirror = new KvMirror(admin.nats.js, claimsBucket(region), parseStreamClaim, admin.logger);
            try {
              if (region === null) await mirror.start();
              else await readWithin(mirror.start(), REGION_READ_MS);
              return [...mirror.values()].map((claim) => ({ claim, region }));
            } catch (err) {
              // One region out of reach (cut off, its watcher needs JetStream's meta group) must not hide the others'.
              if (region === null) throw err;
              unread.push(region);
              return [];
            } finally {
              await mirror.stop().catch(() => undefined);
            }
          }),
        );
        return lists.flat();
      });
      const shown = claims
        .filter(({ claim: c }) => opts.channel === undefined || c.channel === opts.channel.trim().toLowerCase())
        .sort(({ claim: a }, { claim: b }) => (a.channel ?? '').localeCompare(b.channel ?? '') || a.openedAt.localeCompare(b.openedAt));
      const regional = claims.some(({ region }) => region !== null) || unread.length > 0;
      if (opts.json) {
        printJson(shown.map(({ claim, region }) => (regional ? { ...claim, region } : claim)));
      } else {
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
      }
      if (unread.length > 0) {
        const { CliError } = await import('../cli-error.js');
        throw new CliError(`the streams of region ${unread.join(', ')} could not be read within ${REGION_READ_MS / 1000} s (is it cut off from the others?): the list lacks them`);
      }
    });
}

/** How long a region's claims may take to read before the list goes on without them. */
const REGION_READ_MS = 5_000;

function readWithin(started: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timed out')), ms);
  });
  return Promise.race([started, late]).finally(() => clearTimeout(timer));
}
