// relay audit: the operators' actions (keys created or revoked, bans added or lifted), who did each
// and when: the newest records (--limit), printed oldest first as `tail` prints a file.
import type { Command } from 'commander';
import { parseSince, parseWholeNumber } from '../../core/units.js';
import { CliError } from '../cli-error.js';
import { printJson, printTable } from '../output.js';

export function registerAudit(program: Command): void {
  program
    .command('audit')
    .description('who created or revoked which key and added or lifted which ban, and when (RELAY_ACTOR names you)')
    .option('--since <when>', 'from a duration back (10m, 2h, 7d) or an ISO 8601 date or time; default: everything kept')
    .option('--limit <n>', 'the newest this many records (oldest of them first, as tail prints)', '1000')
    .option('--json', 'print a JSON array')
    .action(async (opts: { since?: string; limit: string; json?: boolean }) => {
      const limit = parseWholeNumber(opts.limit);
      if (limit === null || limit < 1) throw new CliError(`--limit must be a whole number of at least 1 (got "${opts.limit}").`, 2);
      let since: string | null = null;
      if (opts.since !== undefined) {
        const parsed = parseSince(opts.since);
        if (!parsed.ok) throw new CliError(`--since ${parsed.problem} (got "${opts.since}").`, 2);
        since = parsed.iso;
      }
      // Loaded when it runs: `relay --help` does not load the mesh's code.
      const { withAdmin } = await import('../admin.js');
      const records = await withAdmin({}, (admin) => admin.audit.newest(since, limit));
      if (opts.json) return printJson(records);
      printTable(
        records.map((r) => ({
          at: r.at,
          actor: r.actor,
          action: r.action,
          target: r.target,
          details: [r.label, r.scopes?.join(','), r.reason, r.expiresAt === undefined ? undefined : `until ${r.expiresAt}`].filter((d) => d !== undefined).join('; '),
        })),
        ['at', 'actor', 'action', 'target', 'details'],
        'No operator actions recorded yet.',
      );
    });
}
