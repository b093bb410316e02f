// What JetStream's refusals mean to the relay, read in one place. The client types most of the codes
// the relay acts on (JetStreamApiCodes); the one it lacks is named here with its number.

import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import { TimeoutError } from '@nats-io/nats-core';
import { PublishError } from './jetstream-ack.js';

/** JetStream's answer when a stream of that name exists already (JetStreamApiCodes has no name for it). */
const STREAM_NAME_IN_USE = 10058;
/** JetStream's answer when no server fits a stream's placement (no cluster of that name, too few servers in it). */
const NO_SUITABLE_PEERS = 10005;

/** JetStream's answer when its meta group has no leader ("JetStream system temporarily unavailable"). */
const CLUSTER_NOT_AVAILABLE = 10008;

/**
 * JetStream's meta group did not answer: refused as temporarily unavailable, or silent until the
 * request's timeout (the first seconds of a cut). A region cut off from the majority of a
 * super-cluster's regions stays so until its links return (docs/REGIONS.md).
 */
export function isMetaUnavailable(err: unknown): boolean {
  return isMetaRefusal(err) || err instanceof TimeoutError || (err instanceof Error && err.cause instanceof TimeoutError);
}

/** JetStream refused a request because its meta group has no leader (a leader get included, once it has had none for a while). */
export function isMetaRefusal(err: unknown): boolean {
  return err instanceof JetStreamApiError && err.code === CLUSTER_NOT_AVAILABLE;
}

/** A write at an expected revision found the key at another: someone else wrote or deleted it first. */
export class RevisionConflict extends Error {
  /** `what`: the key or record written, for the message. */
  constructor(what: string) {
    super(`${what} is not at the expected revision`);
    this.name = 'RevisionConflict';
  }
}

/** JetStream refused a write at an expected revision (its compare-and-set). */
export function isWrongRevision(err: unknown): boolean {
  const code = err instanceof JetStreamApiError ? err.code : err instanceof PublishError ? err.apiCode : undefined;
  return code === JetStreamApiCodes.StreamWrongLastSequence || code === JetStreamApiCodes.StreamWrongLastSequenceUnknown;
}

/** What a failed write at an expected revision throws: a RevisionConflict for `what`, or the error itself. */
export function conflictOr(what: string, err: unknown): Error {
  if (isWrongRevision(err)) return new RevisionConflict(what);
  return err instanceof Error ? err : new Error(String(err));
}

/** JetStream refused to create a stream because one of that name exists (created meanwhile). */
export function isStreamNameInUse(err: unknown): boolean {
  return err instanceof JetStreamApiError && err.code === STREAM_NAME_IN_USE;
}

/** JetStream found no servers to place a stream on: a cluster missing or too small (or a super-cluster still forming). */
export function isNoPlacement(err: unknown): boolean {
  return err instanceof JetStreamApiError && err.code === NO_SUITABLE_PEERS;
}

/**
 * A placement refused because the region's servers are known but not yet (or no longer) seen as
 * online: right after a super-cluster starts, before its servers' first statistics reach the meta
 * leader, nats-server 2.9 refuses with "no suitable peers for placement, peer offline" (seen in CI).
 * A cluster name no server has is refused without the reason.
 */
export function isPlacementPeerOffline(err: unknown): boolean {
  return isNoPlacement(err) && err instanceof JetStreamApiError && /peer offline/i.test(err.message);
}
