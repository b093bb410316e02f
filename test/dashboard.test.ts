// infra/grafana/relay.json against a real Prometheus scraping a running relay: every panel's PromQL
// parses and returns series, and so does every recording rule of infra/prometheus/relay-rules.yml;
// every alert has its `for`, severity, summary, description and a runbook section that exists.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../tools/poll.js';
import { readMetrics } from './helpers/metrics.js';
import { asSent, scrapedThrice, startPrometheus, type PromRule, type RunningPrometheus } from './helpers/prometheus.js';
import { RelayFixture } from './helpers/relay.js';

interface Target {
  expr?: string;
  refId?: string;
  datasource?: unknown;
}
interface Panel {
  id?: number;
  type?: string;
  title?: string;
  datasource?: { type?: string; uid?: string };
  gridPos?: { h: number; w: number; x: number; y: number };
  targets?: Target[];
}
interface Dashboard {
  schemaVersion: number;
  uid: string;
  title: string;
  graphTooltip: number;
  panels: Panel[];
  templating: { list: { name: string; type: string }[] };
}

const root = new URL('..', import.meta.url).pathname;
const dashboard = JSON.parse(readFileSync(`${root}infra/grafana/relay.json`, 'utf8')) as Dashboard;
const queryPanels = dashboard.panels.filter((p) => p.type !== 'row');

describe('the Grafana dashboard, by its structure', () => {
  // Grafana is not installed here: what its dashboard schema (kinds/dashboard in grafana/grafana)
  // requires is checked instead.
  it('follows the dashboard schema: version, variables, a data source, a query and a place on the grid for every panel', () => {
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(39);
    expect(dashboard.uid).toMatch(/^[A-Za-z0-9_-]{8,40}$/);
    expect([0, 1, 2]).toContain(dashboard.graphTooltip);
    const variables = dashboard.templating.list;
    for (const v of variables) expect(['query', 'adhoc', 'constant', 'datasource', 'interval', 'textbox', 'custom', 'system']).toContain(v.type);
    expect(variables.find((v) => v.name === 'datasource')?.type).toBe('datasource');
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of dashboard.panels) {
      expect(typeof p.id, p.title).toBe('number');
      expect(typeof p.title, `panel ${p.id}`).toBe('string');
      const g = p.gridPos!;
      expect(g.h > 0 && g.w > 0 && g.w <= 24 && g.x >= 0 && g.x + g.w <= 24 && g.y >= 0, `${p.title} gridPos`).toBe(true);
    }
    expect(queryPanels.length).toBeGreaterThan(20);
    for (const p of queryPanels) {
      expect(['timeseries', 'stat'], p.title).toContain(p.type);
      expect(p.datasource, p.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
      for (const t of p.targets!) {
        expect(typeof t.expr === 'string' && t.expr !== '', p.title).toBe(true);
        expect(t.refId, p.title).toMatch(/^[A-Z]$/);
      }
    }
    const rows = dashboard.panels.filter((p) => p.type === 'row').map((p) => p.title);
    expect(rows).toEqual(expect.arrayContaining(['Streams', 'Opens and refusals', 'Deliveries and latency', 'NATS', 'Ownership', 'Profile API']));
  });
});

describe('the dashboard and the rules against a real Prometheus scraping a running relay', () => {
  let relay: RelayFixture;
  let prometheus: RunningPrometheus;

  beforeAll(async () => {
    relay = await RelayFixture.start();
    // Traffic: a stream opened (a session looked up), a chat delivered to it, a POST refused, the stream closed.
    const key = await relay.createKey();
    const ch = 'dashboard.example.net';
    const s = await relay.connect(relay.headers(relay.player(), key, ch));
    expect((await relay.post({ type: 'chat', message: 'hello' }, relay.headers(relay.player(), key, ch))).status).toBe(200);
    await s.nextPair();
    expect((await relay.post({ type: 'chat', message: 'no credentials' }, {})).status).toBeGreaterThanOrEqual(400);
    s.close();
    await s.ended;
    // Every close reason has its series from the start: the count is what moves.
    await waitUntil(async () => (await readMetrics(relay.url)).get('relay_streams_closed_total{reason="client_closed"}') === 1, 'the close to be counted');
    prometheus = await startPrometheus({ targets: [new URL(relay.url).host], ruleFiles: [`${root}infra/prometheus/relay-rules.yml`] });
    await scrapedThrice(prometheus);
  });
  afterAll(async () => {
    await prometheus?.stop();
    await relay?.close();
  });

  it('every panel expression parses and returns at least one series', async () => {
    const failures: string[] = [];
    for (const p of queryPanels) {
      for (const t of p.targets!) {
        const r = await prometheus.query(asSent(t.expr!));
        if (r.status !== 'success') failures.push(`${p.title} ${t.refId}: ${r.error ?? r.status}`);
        else if (r.data.result.length === 0) failures.push(`${p.title} ${t.refId}: no series for ${asSent(t.expr!)}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('every recording rule returns series; every alert parses and has for, severity, summary, description and a runbook section', async () => {
    const { groups } = await prometheus.api<{ groups: { rules: PromRule[] }[] }>('rules');
    const rules = groups.flatMap((g) => g.rules);
    const recording = rules.filter((r) => r.type === 'recording');
    const alerts = rules.filter((r) => r.type === 'alerting');
    expect(recording.length).toBeGreaterThan(5);
    expect(alerts.length).toBeGreaterThan(10);
    const operations = readFileSync(`${root}docs/OPERATIONS.md`, 'utf8');
    const sections = new Set([...operations.matchAll(/^#+ (.+)$/gm)].map((m) => m[1]!.toLowerCase().replace(/[^a-z0-9 -]/g, '').replaceAll(' ', '-')));
    const failures: string[] = [];
    for (const r of recording) {
      const q = await prometheus.query(r.query);
      if (q.status !== 'success' || q.data.result.length === 0) failures.push(`${r.name}: ${q.error ?? 'no series'}`);
    }
    for (const a of alerts) {
      if ((await prometheus.query(a.query)).status !== 'success') failures.push(`${a.name}: does not parse`);
      if (!(a.duration! > 0)) failures.push(`${a.name}: no for`);
      if (!['critical', 'warning'].includes(a.labels?.['severity'] ?? '')) failures.push(`${a.name}: severity`);
      if (!a.annotations?.['summary'] || !a.annotations['description']) failures.push(`${a.name}: summary or description`);
      const anchor = /^docs\/OPERATIONS\.md#(.+)$/.exec(a.annotations?.['runbook'] ?? '')?.[1];
      if (anchor !== a.name.toLowerCase() || !sections.has(anchor)) failures.push(`${a.name}: runbook ${a.annotations?.['runbook']} has no section`);
    }
    expect(failures).toEqual([]);
  });
});
