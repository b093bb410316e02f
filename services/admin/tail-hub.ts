// Live tails of the admin API: one Server-Sent Events answer per tail, fed by its own ordered
// consumer on each log the operator's tools read (core/operator-read.ts, following; with regions one
// per region, entries in the order they arrive). A tail whose client leaves is closed at once (its consumers with it),
// there are at most MAX_TAILS, no operator holds more than MAX_TAILS_PER_OPERATOR (so one token, or
// one runaway script, cannot lock the others out), and shutdown ends them all.

import type { JetStreamClient } from '@nats-io/jetstream';
import type { FastifyReply } from 'fastify';
import type { LogEntry } from '../core/log-entry.js';
import type { LogQuery } from '../core/log-query.js';
import type { Logger } from '../core/logger.js';
import { inArrivalOrder } from '../core/merged-log.js';
import { entryName } from '../../schemas/log-entry.js';
import type { OperatorLog } from '../core/operator-logs.js';
import { entryOf, openOperatorRead, type OperatorRead } from '../core/operator-read.js';
import { AdminError } from './admin-error.js';
import type { Operator } from './admin-tokens.js';
import { channelSubject } from '../core/subjects.js';

/** A few operators with a few tabs each; every tail is a consumer on the NATS server. */
const MAX_TAILS = 64;
/** A quarter each: at least four operators can always tail. */
const MAX_TAILS_PER_OPERATOR = 16;
/** Proxies and browsers drop a silent connection; a comment line keeps it open. */
export const TAIL_KEEPALIVE_MS = 15_000;
const MAX_BUFFERED = 4 * 1024 * 1024;
const KEEPALIVE = Buffer.from(': keepalive\n\n');

export class TailHub {
  private readonly js: JetStreamClient;
  private readonly logs: readonly OperatorLog[];
  private readonly logger: Logger;
  /** Each open tail's end, with the name of the operator who opened it. */
  private readonly tails = new Map<() => Promise<void>, string>();

  constructor(js: JetStreamClient, logs: readonly OperatorLog[], logger: Logger) {
    this.js = js;
    this.logs = logs;
    this.logger = logger;
  }

  get size(): number {
    return this.tails.size;
  }

  async open(channel: string, query: LogQuery, operator: Operator, reply: FastifyReply): Promise<void> {
    const own = [...this.tails.values()].filter((name) => name === operator.name).length;
    if (own >= MAX_TAILS_PER_OPERATOR) throw new AdminError('too_many_tails', `${operator.name} already follows ${MAX_TAILS_PER_OPERATOR} live tails; close one first.`);
    if (this.tails.size >= MAX_TAILS) throw new AdminError('tails_busy', `This admin service already follows ${MAX_TAILS} live tails; close one first.`);
    const res = reply.raw;
    let ended = false;
    let tail: OperatorRead | null = null;
    let early: LogEntry[] | null = [];
    const keepalive = setInterval(() => {
      if (early === null) res.write(KEEPALIVE);
    }, TAIL_KEEPALIVE_MS).unref();
    const end = async (): Promise<void> => {
      if (ended) return;
      ended = true;
      this.tails.delete(end);
      clearInterval(keepalive);
      await tail?.close().catch(() => undefined);
      if (!res.writableEnded) res.end();
    };
    this.tails.set(end, operator.name);
    // The response's close is the connection's: the request's own fires once its (empty) body is read.
    res.once('close', () => void end());
    try {
      // Entries read before the answer's head is written wait their turn.
      tail = await openOperatorRead(this.js, this.logs, { filter: channelSubject(channel), startIn: (log) => query.startIn(log.region), follow: true, batch: 256 });
      const sources = tail.sources;
      void (async () => {
        for await (const from of inArrivalOrder(sources)) {
          const e = entryOf(from);
          if (e === null || !query.keep(e)) continue;
          if (early !== null) early.push(e);
          else write(res, e);
          // A reader that cannot keep up is let go rather than buffered without bound: destroyed, since
          // end() would wait for it to read what is buffered and hold the socket and buffer meanwhile.
          if (res.writableLength > MAX_BUFFERED) {
            res.destroy();
            void end();
          }
        }
      })().catch((err: unknown) => {
        this.logger.warn({ err, channel }, 'live tail stopped reading');
        void end();
      });
    } catch (e) {
      await end();
      throw e;
    }
    // The client left while the consumer was being made: nothing of it may stay.
    if (ended) {
      await tail.close().catch(() => undefined);
      return;
    }
    reply.hijack();
    res.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
    });
    res.write(`: tail of ${channel}\n\n`);
    for (const e of early) write(res, e);
    early = null;
    this.logger.debug({ channel, operator: operator.name }, 'live tail opened');
  }

  /** Ends every tail (shutdown). */
  async closeAll(): Promise<void> {
    await Promise.all([...this.tails.keys()].map((end) => end()));
  }
}

function write(res: NodeJS.WritableStream & { destroyed?: boolean }, e: LogEntry): void {
  if (res.destroyed === true) return;
  // JSON has no raw newline, so one data line per entry. The id names the entry: without regions a
  // reader resumes with fromSeq = id. With regions (`eu:1042`) it is no place to resume from (as
  // fromSeq it would start every other region at its oldest entry): a replay's nextFrom is.
  res.write(`id: ${entryName(e.region, e.seq)}\nevent: entry\ndata: ${JSON.stringify(e)}\n\n`);
}
