// Open streams follow their credentials as the mirrors of the keys and bans buckets hear them change:
// a ban closes its account's streams, a key revoked, deleted or expired closes its streams, and an
// expiry set, moved or lifted is followed by the streams open on that key.

import type { BanStore } from '../../core/bans.js';
import type { KeyStore } from '../../core/keys.js';
import type { CloseReasonCode } from '../../../schemas/close.js';
import type { ClientStream } from './client-stream.js';
import { CloseReason } from './close-reason.js';
import type { StreamRegistry } from './stream-registry.js';

export function followCredentials(keys: KeyStore, bans: BanStore, registry: StreamRegistry): void {
  bans.onBan((ban) => {
    if (bans.activeBan(ban.uuid) !== undefined) closeAll(registry.ofAccount(ban.uuid), CloseReason.Banned);
  });
  keys.mirror.on('put', (clientId, key) => {
    if (key.revokedAt !== undefined) closeAll(registry.ofKey(clientId), CloseReason.KeyRevoked);
    else if (key.expiresAt !== undefined && Date.parse(key.expiresAt) <= Date.now()) {
      closeAll(registry.ofKey(clientId), CloseReason.KeyExpired);
    } else {
      for (const s of registry.ofKey(clientId)) registry.followKeyExpiry(s, key.expiresAt);
    }
  });
  keys.mirror.on('delete', (clientId) => closeAll(registry.ofKey(clientId), CloseReason.KeyRevoked));
}

function closeAll(streams: ClientStream[], reason: CloseReasonCode): void {
  for (const s of streams) s.close(reason);
}
