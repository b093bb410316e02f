// Which part of the event log an operator asked for (core/log-query.ts), at its own level: the
// JetStream start options `relay replay`, `relay tail` and the admin API's replay all use.
import { DeliverPolicy } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { parseLogQuery, startingAt } from '../../services/core/log-query.js';

const spell = (f: string): string => f;

describe('a start time past the end of the log', () => {
  // Issue 19: JetStream holds a start time as int64 nanoseconds (they end on 2262-04-11); a later
  // one wrapped round and delivered the whole channel.
  it.each(['2262-04-12T00:00:00Z', '9999-12-31T23:59:59Z'])('since=%s starts at the last instant JetStream can hold', (since) => {
    expect(parseLogQuery({ since }, false, spell).start).toEqual({ deliver_policy: DeliverPolicy.StartTime, opt_start_time: '2262-04-11T23:47:16.854Z' });
  });

  it('an earlier time is passed on unchanged', () => {
    expect(startingAt('2030-01-01T00:00:00.000Z')).toEqual({ deliver_policy: DeliverPolicy.StartTime, opt_start_time: '2030-01-01T00:00:00.000Z' });
  });
});
