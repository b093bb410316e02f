// The streams open on this node, found the ways the gateway needs: by id (an eviction names one), by
// account (a ban), by key (a revocation or a new expiry), by owner (the stream caps), and all of them
// (a drain). It also holds each stream's key-expiry timer. Streams enter when they open and leave
// when they announce their end; closing one is always the stream's own business.

import { atDeadline, type DeadlineTimer } from '../../core/deadline-timer.js';
import type { ClientStream } from './client-stream.js';
import { CloseReason } from './close-reason.js';
import { MultiMap } from '../../core/multimap.js';
import { ownerOf } from '../../core/owner.js';

export class StreamRegistry {
  private readonly byId = new Map<string, ClientStream>();
  private readonly byAccount = new MultiMap<ClientStream>();
  private readonly byKey = new MultiMap<ClientStream>();
  /** By what each stream counts against for the stream caps (account, or key for sessionless streams). */
  private readonly byOwner = new MultiMap<ClientStream>();
  private readonly expiryTimers = new Map<ClientStream, DeadlineTimer>();

  get size(): number {
    return this.byId.size;
  }

  /** Registers an opening stream, closed when its key expires (`keyExpiresAt`, ISO time). */
  add(stream: ClientStream, keyExpiresAt: string | undefined): void {
    this.byId.set(stream.id, stream);
    if (stream.account !== null) this.byAccount.add(stream.account, stream);
    this.byKey.add(stream.clientId, stream);
    this.byOwner.add(ownerOf(stream), stream);
    this.followKeyExpiry(stream, keyExpiresAt);
  }

  /** Forgets an ended stream. */
  remove(stream: ClientStream): void {
    this.byId.delete(stream.id);
    if (stream.account !== null) this.byAccount.delete(stream.account, stream);
    this.byKey.delete(stream.clientId, stream);
    this.byOwner.delete(ownerOf(stream), stream);
    this.expiryTimers.get(stream)?.cancel();
    this.expiryTimers.delete(stream);
  }

  get(id: string): ClientStream | undefined {
    return this.byId.get(id);
  }

  /** Copies, safe to iterate while the streams close. */
  ofAccount(account: string): ClientStream[] {
    return this.byAccount.get(account);
  }

  ofKey(clientId: string): ClientStream[] {
    return this.byKey.get(clientId);
  }

  ofOwner(owner: string): ClientStream[] {
    return this.byOwner.get(owner);
  }

  all(): ClientStream[] {
    return [...this.byId.values()];
  }

  /** Closes the stream when its key expires, however far away that is; undefined: never. */
  followKeyExpiry(stream: ClientStream, expiresAt: string | undefined): void {
    this.expiryTimers.get(stream)?.cancel();
    this.expiryTimers.delete(stream);
    if (expiresAt === undefined) return;
    this.expiryTimers.set(stream, atDeadline(Date.parse(expiresAt), () => stream.close(CloseReason.KeyExpired)));
  }
}
