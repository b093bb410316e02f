// relay keys create|list|revoke
// Each action loads what it needs when it runs (await import): `relay --help` loads none of it.
import type { Command } from 'commander';
import { CliError } from '../cli-error.js';
import { printJson, printTable } from '../output.js';

export function registerKeys(program: Command): void {
  const keys = program.command('keys').description('issue, list and revoke API keys (client credentials)');

  keys
    .command('create')
    .description('create a key; its secret is printed once and never stored')
    .requiredOption('--scopes <list>', `comma-separated scopes, e.g. irc.connection.establish,irc.messages.send,irc.messages.receive`)
    .option('--label <text>', 'a name for people (the mod or bridge it is for)')
    .option('--expires <when>', 'a duration from now (30d, 12h, 90m) or an ISO 8601 date or time (2030-01-31, 2030-01-31T12:00:00Z)')
    .option('--json', 'print {"clientId","clientSecret","scopes"} as JSON')
    .action(async (opts: { scopes: string; label?: string; expires?: string; json?: boolean }) => {
      const [{ withAdmin }, { expiryArg }, { isRelayError }, { ALL_SCOPES }] = await Promise.all([
        import('../admin.js'),
        import('../args.js'),
        import('../../core/errors.js'),
        import('../../core/scopes.js'),
      ]);
      const scopes = opts.scopes.split(',').map((s) => s.trim()).filter((s) => s !== '');
      const expiresAt = opts.expires === undefined ? undefined : expiryArg(opts.expires);
      const created = await withAdmin({}, async (admin) => {
        const made = await admin.keys
          .create({ scopes, ...(opts.label !== undefined ? { label: opts.label } : {}), ...(expiresAt !== undefined ? { expiresAt } : {}) })
          .catch((e: unknown) => {
            if (isRelayError(e)) throw new CliError(`${e.message} Known scopes: ${ALL_SCOPES.join(', ')}.`, 2);
            throw e;
          });
        // The trail names the key, its scopes and label; never its secret.
        await admin.audited({
          action: 'key.create',
          target: made.clientId,
          scopes: made.scopes,
          ...(opts.label !== undefined ? { label: opts.label } : {}),
          ...(made.expiresAt !== undefined ? { expiresAt: made.expiresAt } : {}),
        });
        return made;
      });
      if (opts.json) return printJson(created);
      process.stdout.write(
        [
          `client id:     ${created.clientId}`,
          `client secret: ${created.clientSecret}`,
          `scopes:        ${created.scopes.join(', ')}`,
          ...(created.expiresAt !== undefined ? [`expires:       ${created.expiresAt}`] : []),
          '',
          'The secret is shown only now; store it in the client build.',
          '',
        ].join('\n'),
      );
    });

  keys
    .command('list')
    .description('list keys (never their secrets)')
    .option('--json', 'print a JSON array')
    .action(async (opts: { json?: boolean }) => {
      const [{ withAdmin }, { keyStatus, keyView }] = await Promise.all([import('../admin.js'), import('../../core/key-view.js')]);
      const list = await withAdmin({ keys: true }, async (admin) => admin.keys.list());
      if (opts.json) return printJson(list.map((k) => keyView(k)));
      printTable(
        list.map((k) => ({
          client_id: k.clientId,
          status: keyStatus(k),
          label: k.label ?? '',
          created: k.createdAt,
          expires: k.expiresAt ?? '',
          scopes: k.scopes.join(','),
        })),
        ['client_id', 'status', 'label', 'created', 'expires', 'scopes'],
        'No keys yet. Create one with: relay keys create --scopes irc.connection.establish,irc.messages.send,irc.messages.receive',
      );
    });

  keys
    .command('revoke')
    .description('revoke a key: refused from now on, its open streams are closed on every node')
    .argument('<clientId>')
    .option('--json', 'print the revoked key as JSON')
    .action(async (value: string, opts: { json?: boolean }) => {
      const [{ withAdmin }, { clientIdArg }, { isRelayError }, { keyView }] = await Promise.all([
        import('../admin.js'),
        import('../args.js'),
        import('../../core/errors.js'),
        import('../../core/key-view.js'),
      ]);
      const clientId = clientIdArg(value);
      const revoked = await withAdmin({}, async (admin) => {
        const { key, changed } = await admin.keys.revoke(clientId).catch((e: unknown) => {
          if (isRelayError(e)) throw new CliError(e.message, e.status === 404 ? 3 : 1);
          throw e;
        });
        if (changed) await admin.audited({ action: 'key.revoke', target: key.clientId });
        return key;
      });
      if (opts.json) return printJson(keyView(revoked));
      process.stdout.write(`revoked ${revoked.clientId} at ${revoked.revokedAt ?? ''}\n`);
    });
}
