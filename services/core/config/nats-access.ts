// The NATS credentials and TLS files, checked before any connection is tried: a missing file or a
// half-given pair is one sentence at start, not a handshake error later.

import { existsSync } from 'node:fs';
import { nkeys } from '@nats-io/nats-core';
import { quoted } from './wording.js';

export function natsAccessProblems(text: (name: string) => string): string[] {
  const problems: string[] = [];
  for (const name of ['NATS_CREDS_FILE', 'NATS_TLS_CA', 'NATS_TLS_CERT', 'NATS_TLS_KEY']) {
    const path = text(name);
    if (path !== '' && !existsSync(path)) problems.push(`${name} names ${quoted(path)}, which does not exist.`);
  }
  if ((text('NATS_TLS_CERT') === '') !== (text('NATS_TLS_KEY') === '')) {
    problems.push('NATS_TLS_CERT and NATS_TLS_KEY go together: a client certificate needs its private key.');
  }
  const seed = text('NATS_NKEY_SEED');
  if (seed !== '') {
    if (text('NATS_CREDS_FILE') !== '') problems.push('NATS_NKEY_SEED and NATS_CREDS_FILE exclude each other: a .creds file carries its own nkey.');
    if (!validUserSeed(seed)) problems.push('NATS_NKEY_SEED must be a user nkey seed, starting with SU (got (hidden)).');
  }
  return problems;
}

function validUserSeed(seed: string): boolean {
  if (!seed.startsWith('SU')) return false;
  try {
    nkeys.fromSeed(new TextEncoder().encode(seed));
    return true;
  } catch {
    return false;
  }
}
