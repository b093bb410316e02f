// A node that has served nothing yet: every counter series whose label values are known in advance
// exists at 0, so the dashboard (infra/grafana/relay.json) and the alerts
// (infra/prometheus/relay-rules.yml) read 0 on it rather than "no data". The label sets come from
// the catalogues the relay counts by, as the code imports them.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HTTP_ERROR_CODES } from '../schemas/http-errors.js';
import { PAYLOAD_TYPES } from '../schemas/payload-types.js';
import { FRAME_DROP_REASONS, REPEATED_ACK_OUTCOMES, RESUME_ANSWERS } from '../services/core/metrics.js';
import { LOOKUP_REFUSALS, PROFILE_OUTCOMES } from '../services/core/profile.js';
import { CloseReason } from '../services/gateway/stream/close-reason.js';
import { POST_STATUSES } from '../services/ingress/ingress.js';
import { waitUntil } from '../tools/poll.js';
import { readMetrics } from './helpers/metrics.js';
import { asSent, scrapedThrice, startPrometheus, type PromRule, type RunningPrometheus } from './helpers/prometheus.js';
import { RelayFixture } from './helpers/relay.js';

const root = new URL('..', import.meta.url).pathname;

const KNOWN_SERIES: Array<[name: string, label: string, values: readonly string[]]> = [
  ['relay_refusals_total', 'code', HTTP_ERROR_CODES],
  ['relay_streams_closed_total', 'reason', Object.values(CloseReason)],
  ['relay_frames_dropped_total', 'reason', FRAME_DROP_REASONS],
  ['relay_posts_total', 'outcome', POST_STATUSES],
  ['relay_entries_published_total', 'type', PAYLOAD_TYPES],
  ['relay_profile_api_calls_total', 'outcome', PROFILE_OUTCOMES],
  ['relay_session_lookups_refused_total', 'reason', LOOKUP_REFUSALS],
  ['relay_resumes_total', 'answered', RESUME_ANSWERS],
  ['relay_publish_acks_repeated_total', 'stored', REPEATED_ACK_OUTCOMES],
  // A cached session makes no call: no duration.
  ['relay_profile_api_duration_seconds_count', 'outcome', PROFILE_OUTCOMES.filter((o) => o !== 'cached')],
];
const TABLE = KNOWN_SERIES.flatMap(([name, label, values]) => values.map((value) => `${name}{${label}="${value}"}`));

let relay: RelayFixture;
beforeAll(async () => {
  relay = await RelayFixture.start();
});
afterAll(async () => {
  await relay?.close();
});

describe("a fresh node's /metrics", () => {
  let metrics: Map<string, number>;
  beforeAll(async () => {
    metrics = await readMetrics(relay.url);
  });

  it.each(TABLE)('has %s at 0', (series) => {
    expect(metrics.get(series)).toBe(0);
  });
});

/**
 * An alert's expression with every comparison made a `bool` one: 0 or 1 wherever the expression has
 * a value, and nothing only where it has none ("no data"), which is what is checked.
 */
function asValue(expr: string): string {
  return expr.replace(/ (==|!=|>=|<=|>|<) (?!bool )/g, ' $1 bool ');
}

describe('the alerts and the dashboard against a real Prometheus scraping a fresh node', () => {
  let prometheus: RunningPrometheus;
  let rules: PromRule[];

  beforeAll(async () => {
    prometheus = await startPrometheus({ targets: [new URL(relay.url).host], ruleFiles: [`${root}infra/prometheus/relay-rules.yml`] });
    await scrapedThrice(prometheus);
    // The alerts read recording rules, evaluated after those scrapes.
    await waitUntil(async () => (await prometheus.query('relay:stream_opens:rate5m')).data.result.length === 1, 'the recording rules to be evaluated', 20_000);
    const { groups } = await prometheus.api<{ groups: { rules: PromRule[] }[] }>('rules');
    rules = groups.flatMap((g) => g.rules);
  });
  afterAll(async () => {
    await prometheus?.stop();
  });

  it('every alert of relay-rules.yml evaluates to a value, not "no data"', async () => {
    const alerts = rules.filter((r) => r.type === 'alerting');
    expect(alerts.length).toBeGreaterThan(10);
    const noData: string[] = [];
    for (const a of alerts) {
      const r = await prometheus.query(asValue(a.query));
      expect(r.status, `${a.name}: ${r.error ?? ''}`).toBe('success');
      if (r.data.result.length === 0) noData.push(`${a.name}: ${asValue(a.query)}`);
    }
    expect(noData).toEqual([]);
  });

  it('every panel of the dashboard shows a series', async () => {
    const dashboard = JSON.parse(readFileSync(`${root}infra/grafana/relay.json`, 'utf8')) as { panels: { title?: string; targets?: { expr?: string }[] }[] };
    const noData: string[] = [];
    for (const p of dashboard.panels) {
      for (const t of p.targets ?? []) {
        const expr = asSent(t.expr ?? '');
        if ((await prometheus.query(expr)).data.result.length === 0) noData.push(`${p.title ?? ''}: ${expr}`);
      }
    }
    expect(noData).toEqual([]);
  });
});
