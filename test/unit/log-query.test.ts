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
    expect(parseLogQuery({ since }, false, spell).startIn(null)).toEqual({ deliver_policy: DeliverPolicy.StartTime, opt_start_time: '2262-04-11T23:47:16.854Z' });
  });

  it('an earlier time is passed on unchanged', () => {
    expect(startingAt('2030-01-01T00:00:00.000Z')).toEqual({ deliver_policy: DeliverPolicy.StartTime, opt_start_time: '2030-01-01T00:00:00.000Z' });
  });
});

describe('fromSeq on a mesh with regions', () => {
  const regions = ['eu', 'us', 'ap'];

  it('starts each region named at its sequence, and every other region at its oldest entry kept', () => {
    const q = parseLogQuery({ fromSeq: 'eu:1042.ap:7' }, false, spell, regions);
    expect(q.startIn('eu')).toEqual({ deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: 1042 });
    expect(q.startIn('ap')).toEqual({ deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: 7 });
    expect(q.startIn('us')).toEqual({ deliver_policy: DeliverPolicy.All });
  });

  it.each([
    ['a bare sequence, which names no region', '1042', /names a sequence in each region's log on a mesh with regions/],
    ['a region this mesh lacks', 'eu:1.mars:2', /names "mars", not a region of this mesh \(eu, us, ap\)/],
    ['a region named twice', 'eu:1.eu:2', /names a sequence in each region's log/],
    ['a sequence past 15 digits', 'eu:1234567890123456', /names a sequence in each region's log/],
  ])('refuses %s with a sentence naming it', (_, fromSeq, sentence) => {
    expect(() => parseLogQuery({ fromSeq }, false, spell, regions)).toThrow(sentence);
  });

  it('refuses a region position without regions, as any non-number', () => {
    expect(() => parseLogQuery({ fromSeq: 'eu:5' }, false, spell)).toThrow(/must be a stream sequence number/);
  });

  it('still refuses since and fromSeq together', () => {
    expect(() => parseLogQuery({ since: '1h', fromSeq: 'eu:5' }, false, spell, regions)).toThrow(/not both/);
  });
});
