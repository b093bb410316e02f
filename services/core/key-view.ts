// What the console and the CLI show of a key: everything but the secret's hash, and its status.

import type { KeyView } from '../../schemas/admin-api.js';
import type { KeyRecord } from '../../schemas/records.js';

export function keyStatus(k: KeyRecord, now = Date.now()): KeyView['status'] {
  if (k.revokedAt !== undefined) return 'revoked';
  if (k.expiresAt !== undefined && Date.parse(k.expiresAt) <= now) return 'expired';
  return 'active';
}

export function keyView(k: KeyRecord, now = Date.now()): KeyView {
  const { secretSha256: _hidden, ...rest } = k;
  return { ...rest, status: keyStatus(k, now) };
}
