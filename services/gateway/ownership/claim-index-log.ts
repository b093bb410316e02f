// Where the crash index (claim-index.ts) keeps each gateway's claimed keys: the stream
// RELAY_CLAIM_INDEX (with regions, the region's own: subjects.ts claimIndex), made by `relay setup`
// and kept CLAIM_TTL (as long as the claims bucket keeps an unrenewed claim), one subject per gateway. A message is a newline-separated list of keys, read back
// by message gets (no consumer: a gateway may not create them, core/log-walk.ts). Tests keep the same
// log in memory (test/helpers/interleavings/).

import type { JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import type { Logger } from '../../core/logger.js';
import { walkLog } from '../../core/log-walk.js';
import { maxPayload } from '../../core/nats-connection.js';
import { claimIndex } from '../../core/subjects.js';

export interface ClaimIndexLog {
  /** Adds keys to the node's list; handed to the connection before this returns, not acknowledged. */
  append(node: string, keys: string[]): void;
  /** Every key the node's list holds (its messages age out after CLAIM_TTL). */
  read(node: string): Promise<Set<string>>;
}

export interface NatsClaimIndexLogOptions {
  nc: NatsConnection;
  jsm: JetStreamManager;
  logger: Logger;
  /** The gateway's region (null: a mesh without regions): each region keeps its own index. */
  region: string | null;
}

export class NatsClaimIndexLog implements ClaimIndexLog {
  private readonly index: { stream: string; prefix: string };

  constructor(private readonly o: NatsClaimIndexLogOptions) {
    this.index = claimIndex(o.region);
  }

  /** A core publish the stream stores without an acknowledgement: best effort (what it misses ages out of the bucket). */
  append(node: string, keys: string[]): void {
    for (const batch of batches(keys, this.maxPayload())) {
      try {
        this.o.nc.publish(this.index.prefix + node, batch);
      } catch (err) {
        // The connection is closing: claims not indexed age out of the bucket by its max age.
        this.o.logger.warn({ err, keys: batch.split('\n').length }, 'could not note claimed keys in the claim index');
      }
    }
  }

  async read(node: string): Promise<Set<string>> {
    const keys = new Set<string>();
    const text = new TextDecoder();
    await walkLog(this.o.jsm, { stream: this.index.stream, filter: this.index.prefix + node, fromSeq: 1 }, (m) => {
      for (const key of text.decode(m.data).split('\n')) if (key !== '') keys.add(key);
    });
    return keys;
  }

  /** The server's payload limit, with room for the protocol around it. */
  private maxPayload(): number {
    return Math.max(1024, maxPayload(this.o.nc) - 1024);
  }
}

/** Keys joined by newlines into messages of at most `limit` bytes (a key is ASCII: a byte a character). */
export function batches(keys: string[], limit: number): string[] {
  const out: string[] = [];
  let current = '';
  for (const key of keys) {
    if (current !== '' && current.length + 1 + key.length > limit) {
      out.push(current);
      current = '';
    }
    current = current === '' ? key : `${current}\n${key}`;
  }
  if (current !== '') out.push(current);
  return out;
}
