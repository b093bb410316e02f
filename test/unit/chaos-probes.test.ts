// The campaign's counters are read from each relay's /metrics text: a metric in all, or one label's share.
import { describe, expect, it } from 'vitest';
import { sum } from '../../tools/chaos/probes.js';

const TEXT = [
  '# TYPE relay_publish_acks_repeated_total counter',
  'relay_publish_acks_repeated_total{stored="twice",node="i1"} 2',
  'relay_publish_acks_repeated_total{stored="deduplicated",node="i1"} 1',
  'relay_publish_acks_repeated_total_extra{stored="twice",node="i1"} 50',
  'relay_evictions_total{node="g1"} 7',
  'relay_evictions_total 3',
].join('\n');

describe('counters read from /metrics', () => {
  it('sums every label set of a metric, and no metric whose name merely starts the same', () => {
    expect(sum(TEXT, 'relay_publish_acks_repeated_total')).toBe(3);
    expect(sum(TEXT, 'relay_evictions_total')).toBe(10);
  });

  it('sums one label value when the name carries it', () => {
    expect(sum(TEXT, 'relay_publish_acks_repeated_total{stored="twice"}')).toBe(2);
    expect(sum(TEXT, 'relay_publish_acks_repeated_total{stored="deduplicated"}')).toBe(1);
    expect(sum(TEXT, 'relay_publish_acks_repeated_total{stored="tw"}')).toBe(0);
  });
});
