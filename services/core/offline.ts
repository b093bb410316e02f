// Offline identities for development, the way offline-mode game servers derive them.

import { createHash } from 'node:crypto';
import { normaliseUuid } from '../../schemas/uuid.js';
import { RelayError } from './errors.js';
import type { Profile, ProfileResolver, ResolveOptions } from './profile.js';

/** Name-based (v3, MD5) UUID of "OfflinePlayer:<name>". */
export function offlineUuid(name: string): string {
  const hash = createHash('md5').update(`OfflinePlayer:${name}`, 'utf8').digest();
  hash[6] = (hash[6]! & 0x0f) | 0x30;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  return normaliseUuid(hash.toString('hex'))!;
}

const OFFLINE_TOKEN = /^offline:([A-Za-z0-9_]{3,16})$/;

/** Development only: `Bearer offline:<name>` is player <name> with the uuid offline-mode servers give. */
export class OfflineProfileResolver implements ProfileResolver {
  resolve(token: string, _options?: ResolveOptions): Promise<Profile> {
    const m = OFFLINE_TOKEN.exec(token);
    if (m === null) {
      return Promise.reject(
        new RelayError('invalid_session', 'Offline mode accepts only Bearer offline:<name> (3 to 16 letters, digits or _).'),
      );
    }
    return Promise.resolve({ uuid: offlineUuid(m[1]!), name: m[1]! });
  }
}
