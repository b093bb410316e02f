// relay bans list|add|remove
// Each action loads what it needs when it runs (await import): `relay --help` loads none of it.
import type { Command } from 'commander';
import { CliError } from '../cli-error.js';
import { printJson, printTable } from '../output.js';

export function registerBans(program: Command): void {
  const bans = program.command('bans').description('list, add and lift mesh bans');

  bans
    .command('list')
    .description('list banned accounts')
    .option('--json', 'print a JSON array')
    .action(async (opts: { json?: boolean }) => {
      const { withAdmin } = await import('../admin.js');
      const list = await withAdmin({ bans: true }, async (admin) => admin.bans.list());
      if (opts.json) return printJson(list);
      printTable(
        list.map((b) => ({
          uuid: b.uuid,
          banned: b.bannedAt,
          by: b.by,
          expires: b.expiresAt ?? '',
          client_id: b.clientId ?? '',
          user_agent: b.userAgent ?? '',
          reason: b.reason,
        })),
        ['uuid', 'banned', 'by', 'expires', 'client_id', 'user_agent', 'reason'],
        'No bans.',
      );
    });

  bans
    .command('add')
    .description('ban an account: refused from now on, its open streams are closed on every node')
    .argument('<uuid>')
    .option('--reason <text>', 'why (shown in bans list)', 'banned by an operator')
    .option('--expires <when>', 'a duration from now (30d, 12h) or an ISO 8601 date or time (2030-01-31, 2030-01-31T12:00:00Z)')
    .option('--json', 'print the ban as JSON')
    .action(async (value: string, opts: { reason: string; expires?: string; json?: boolean }) => {
      const [{ withAdmin }, { expiryArg, uuidArg }, { plainTextProblem }, { currentActor }] = await Promise.all([
        import('../admin.js'),
        import('../args.js'),
        import('../../../schemas/text.js'),
        import('../../core/audit.js'),
      ]);
      const uuid = uuidArg(value);
      // The same rule as the admin API's (schemas/text.ts): a reason is read by other operators.
      const reasonProblem = plainTextProblem('--reason', opts.reason);
      if (reasonProblem !== null) throw new CliError(reasonProblem, 2);
      const expiresAt = opts.expires === undefined ? undefined : expiryArg(opts.expires);
      const ban = await withAdmin({}, async (admin) => {
        const made = await admin.bans.ban(uuid, { reason: opts.reason, by: currentActor(), ...(expiresAt !== undefined ? { expiresAt } : {}) });
        await admin.audited({ action: 'ban.add', target: made.uuid, reason: made.reason, ...(made.expiresAt !== undefined ? { expiresAt: made.expiresAt } : {}) });
        return made;
      });
      if (opts.json) return printJson(ban);
      process.stdout.write(`banned ${ban.uuid}${expiresAt !== undefined ? ` until ${expiresAt}` : ''}\n`);
    });

  bans
    .command('remove')
    .description('lift a ban')
    .argument('<uuid>')
    .action(async (value: string) => {
      const [{ withAdmin }, { uuidArg }] = await Promise.all([import('../admin.js'), import('../args.js')]);
      const uuid = uuidArg(value);
      const { lifted, unreached } = await withAdmin({}, async (admin) => {
        const lift = await admin.bans.unban(uuid);
        if (lift.lifted) await admin.audited({ action: 'ban.remove', target: uuid });
        return lift;
      });
      // A region cut off keeps the bans it holds: said, with exit 1, so a script runs the lift again.
      if (unreached.length > 0) {
        const done = lifted ? `Lifted the ban on ${uuid} where it could be; the` : 'The';
        throw new CliError(`${done} bans in ${unreached.join(', ')} could not be read or lifted (is that region cut off?): run this again once its link returns.`, 1);
      }
      if (!lifted) throw new CliError(`${uuid} is not banned.`, 3);
      process.stdout.write(`lifted the ban on ${uuid}\n`);
    });
}
