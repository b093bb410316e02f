// Offline identities for development, the way offline-mode game servers derive them.

import { createHash } from 'node:crypto';
import { normaliseUuid } from '../../schemas/uuid.js';

/** Name-based (v3, MD5) UUID of "OfflinePlayer:<name>". */
export function offlineUuid(name: string): string {
  const hash = createHash('md5').update(`OfflinePlayer:${name}`, 'utf8').digest();
  hash[6] = (hash[6]! & 0x0f) | 0x30;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  return normaliseUuid(hash.toString('hex'))!;
}
