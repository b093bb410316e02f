// The nats-server configuration text of the relay's users, written from rolePermissions
// (nats-permissions.ts): infra/nats/permissions.conf for a mesh without regions, and what
// `relay nats-permissions --region R` prints for the servers of one region. Both are generated, so a
// stream or subject is named once, in the layout.

import type { StreamPlan } from './nats-layout.js';
import { accountPlans, type AccountPlan, type ExportPlan } from './nats-accounts.js';
import { JETSTREAM_ACCOUNT, rolePermissions, type RolePermissions } from './nats-permissions.js';

const WIDTH = 120;

const HEADER = `# One NATS user per role of the relay, each allowed only what its role does (docs/OPERATIONS.md,
# "Permissions per role"). Written by \`npm run nats-permissions\` from the relay's layout (do not edit
# by hand); test/nats-role-permissions.test.ts and test/mesh/regions-permissions.test.ts try every
# role x JetStream verb x stream against it and expect exactly their tables, and aim every answer
# JetStream gives at what it must not reach. Include it in each server's configuration, which then
# has no \`authorization\` or \`accounts\` block of its own:
#
#   include "permissions.conf"
#
# JetStream lives in account ${JETSTREAM_ACCOUNT}, with the operator's roles (cli, admin). The ingress and the
# gateway each have an account of their own, without JetStream, importing from ${JETSTREAM_ACCOUNT} exactly what
# they use: NATS does not check a reply subject against a user's permissions, and JetStream answers
# with its account's rights, but the answer to a request made through an import comes back into the
# importer's account. Neither role may create a consumer (its deliveries would be ${JETSTREAM_ACCOUNT}'s): they
# follow keys, bans and heartbeats by their buckets' change feeds (relay.kv.<bucket>.>).
#
# The passwords are read from the nats-server's environment (RELAY_NATS_*_PASSWORD); each must begin
# with a letter (nats-server reads a substituted value that begins with a digit, 1e5..., as a number
# and refuses the whole file). Give each service its own user as NATS_USER / NATS_PASSWORD (or
# replace \`password\` by an \`nkey\` public key and give the service NATS_NKEY_SEED).
#
# Only the operator's \`cli\` user creates and updates streams (\`relay setup\`); the internet-facing
# services start against what exists and may not change a limit. No user may delete, purge or
# remove messages from a stream. Each role writes only its own KV keys: its heartbeats under
# $KV.relay-nodes.<role>.*, the bans it issues itself under $KV.relay-bans.auto.<role>.*. Each role
# hears replies only under its own inbox prefix, _INBOX.<role>.>, so it cannot read another's.`;

/** What is said of one region's file: NATS checks a user where it connects, so each region's servers hold their own. */
function regionHeader(region: string, all: readonly string[]): string {
  return [
    `# For the servers of region "${region}" only (REGIONS=${all.join(',')}; \`relay nats-permissions --region ${region}\`).`,
    '# A server checks the users of the clients connected to it, so each region loads its own file: here the',
    `# ingress may write only to region ${region}'s log and Idempotency-Key records, and the gateway reads`,
    `# region ${region}'s log and its copies of the others'. Both read the keys and every region's bans from`,
    `# region ${region}'s copies, and write the bans they issue to relay-bans-${region} only. The operator's tools (admin,`,
    '# cli) read and write as the home region wherever they connect: its log and copies, keys, bans and audit trail.',
    "# Give each region's users passwords (or nkeys) of their own: a credential is then good in its region only.",
  ].join('\n');
}

/** Quoted subjects joined into lines no wider than WIDTH, each indented. */
function subjectLines(groups: readonly string[][], indent: string): string[] {
  const lines: string[] = [];
  for (const group of groups) {
    let line = '';
    for (const subject of group.map((s) => JSON.stringify(s))) {
      if (line !== '' && indent.length + line.length + 2 + subject.length > WIDTH) {
        lines.push(`${indent}${line}`);
        line = '';
      }
      line = line === '' ? subject : `${line}, ${subject}`;
    }
    if (line !== '') lines.push(`${indent}${line}`);
  }
  return lines;
}

/** A sentence as comment lines no wider than WIDTH. */
function commentLines(text: string, indent: string): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && indent.length + 2 + line.length + 1 + word.length > WIDTH - 20) {
      lines.push(`${indent}# ${line}`);
      line = '';
    }
    line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(`${indent}# ${line}`);
  return lines;
}

function userBlock(r: RolePermissions, indent: string): string[] {
  const i = (n: number): string => indent + ' '.repeat(n);
  return [
    ...commentLines(r.comment, indent),
    `${indent}{`,
    `${i(2)}user: ${r.role}`,
    `${i(2)}password: $RELAY_NATS_${r.role.toUpperCase()}_PASSWORD`,
    `${i(2)}permissions: {`,
    `${i(4)}publish: {`,
    `${i(6)}allow: [`,
    ...subjectLines(r.publish, i(8)),
    `${i(6)}]`,
    `${i(4)}}`,
    `${i(4)}subscribe: { allow: [${r.subscribe.map((s) => JSON.stringify(s)).join(', ')}] }`,
    `${i(2)}}`,
    `${indent}}`,
  ];
}

function exportLine(e: ExportPlan): string {
  return `      { ${e.kind}: ${JSON.stringify(e.subject)}, accounts: [${e.accounts.join(', ')}] }`;
}

function importLines(a: AccountPlan): string[] {
  return [
    ...a.imports.services.map((s) => `      { service: { account: ${JETSTREAM_ACCOUNT}, subject: ${JSON.stringify(s)} } }`),
    ...a.imports.streams.map((s) => `      { stream: { account: ${JETSTREAM_ACCOUNT}, subject: ${JSON.stringify(s)} } }`),
  ];
}

function accountBlock(a: AccountPlan, exports: readonly ExportPlan[]): string[] {
  const jetstream = a.name === JETSTREAM_ACCOUNT;
  return [
    `  ${a.name} {`,
    ...(jetstream ? ['    jetstream: enabled'] : []),
    '    users = [',
    ...a.roles.flatMap((r) => userBlock(r, '      ')),
    '    ]',
    ...(jetstream ? ['    exports = [', ...exports.map(exportLine), '    ]'] : ['    imports = [', ...importLines(a), '    ]']),
    '  }',
  ];
}

/** The whole file: for a mesh without regions (`region` null), or for one region's servers. */
export function permissionsFile(layout: readonly StreamPlan[], region: { name: string; all: readonly string[] } | null): string {
  const { accounts, exports } = accountPlans(rolePermissions(layout, region?.name ?? null));
  return [HEADER, ...(region === null ? [] : ['#', regionHeader(region.name, region.all)]), '', 'accounts {', ...accounts.flatMap((a) => accountBlock(a, exports)), '}', ''].join('\n');
}
