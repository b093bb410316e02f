// The NATS accounts the roles' users live in (nats-permissions.ts says why there are several): the
// JetStream account exports, each to the accounts that need it, exactly what their roles publish
// to it (services) and hear from it (streams), and each role's account imports that and nothing
// more. Written from the roles' own permissions, so a subject is named once.

import { JETSTREAM_ACCOUNT, type RolePermissions } from './nats-permissions.js';

export interface AccountPlan {
  name: string;
  roles: RolePermissions[];
  /** Subjects imported from JETSTREAM_ACCOUNT (none for it). */
  imports: { services: string[]; streams: string[] };
}

export interface ExportPlan {
  kind: 'service' | 'stream';
  subject: string;
  /** The accounts allowed to import it: no other may. */
  accounts: string[];
}

/** A role's own inbox: replies come back to it in its account, never imported. */
const isInbox = (subject: string): boolean => subject.startsWith('_INBOX.');

const unique = (subjects: Iterable<string>): string[] => [...new Set(subjects)];

/** Every account, JetStream's first, and what JetStream's account exports. */
export function accountPlans(roles: readonly RolePermissions[]): { accounts: AccountPlan[]; exports: ExportPlan[] } {
  const names = unique([JETSTREAM_ACCOUNT, ...roles.map((r) => r.account)]);
  const accounts = names.map((name): AccountPlan => {
    const own = roles.filter((r) => r.account === name);
    if (name === JETSTREAM_ACCOUNT) return { name, roles: own, imports: { services: [], streams: [] } };
    const internal = new Set(own.flatMap((r) => r.internal));
    return {
      name,
      roles: own,
      imports: {
        services: unique(own.flatMap((r) => r.publish.flat())).filter((s) => !internal.has(s)),
        streams: unique(own.flatMap((r) => r.subscribe)).filter((s) => !internal.has(s) && !isInbox(s)),
      },
    };
  });
  const exports = new Map<string, ExportPlan>();
  for (const a of accounts) {
    for (const [kind, subjects] of [['service', a.imports.services], ['stream', a.imports.streams]] as const) {
      for (const subject of subjects) {
        const key = `${kind} ${subject}`;
        const known = exports.get(key);
        if (known === undefined) exports.set(key, { kind, subject, accounts: [a.name] });
        else known.accounts.push(a.name);
      }
    }
  }
  return { accounts, exports: [...exports.values()] };
}
