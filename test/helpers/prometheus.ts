// A real Prometheus (and promtool) for the tests of infra/prometheus/ and infra/grafana/: Debian's
// `prometheus` package, installed like nats-server when missing (never skipped).
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { aptInstall, commandPath } from '../../tools/apt.js';
import { endChild, exitOf, running } from '../../tools/child.js';
import { httpOk, waitUntil } from '../../tools/poll.js';
import { freePort } from '../../tools/ports.js';

function find(name: 'prometheus' | 'promtool'): string {
  const fallbacks = [`/usr/bin/${name}`];
  const found = commandPath(name, fallbacks) ?? (aptInstall('prometheus') ? commandPath(name, fallbacks) : null);
  if (found === null) throw new Error(`${name} is not installed; install Debian's package: apt-get install -y prometheus`);
  return found;
}

export function promtool(args: readonly string[], cwd: string): SpawnSyncReturns<string> {
  return spawnSync(find('promtool'), args, { cwd, encoding: 'utf8' });
}

/** A rule as Prometheus lists it (GET /api/v1/rules). */
export interface PromRule {
  type: 'recording' | 'alerting';
  name: string;
  query: string;
  duration?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** A dashboard panel's PromQL as Grafana would send it: every node, a rate window that holds a few 1 s scrapes. */
export function asSent(expr: string): string {
  return expr.replaceAll('$__rate_interval', '1m').replaceAll('$node', '.*');
}

export interface PromResult {
  status: string;
  error?: string;
  data: { resultType: string; result: unknown[] };
}

export interface RunningPrometheus {
  url: string;
  /** An instant query (GET /api/v1/query). */
  query(expr: string): Promise<PromResult>;
  /** GET /api/v1/<path>, its `data`. */
  api<T>(path: string): Promise<T>;
  stop(): Promise<void>;
}

/** Starts Prometheus scraping `targets` (host:port) every second with `ruleFiles` loaded. */
export async function startPrometheus(options: { targets: readonly string[]; ruleFiles: readonly string[] }): Promise<RunningPrometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'relay-prometheus-'));
  const port = await freePort();
  const config = {
    global: { scrape_interval: '1s', evaluation_interval: '1s' },
    rule_files: options.ruleFiles,
    scrape_configs: [{ job_name: 'relay', static_configs: [{ targets: options.targets }] }],
  };
  // JSON is YAML: no YAML writer needed.
  writeFileSync(join(dir, 'prometheus.yml'), JSON.stringify(config));
  const child = spawn(
    find('prometheus'),
    [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const exited = exitOf(child);
  let log = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (log = (log + chunk).slice(-4000)));
  const url = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    await endChild(child, exited, { killAfterMs: 5000 });
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitUntil(() => httpOk(`${url}/-/ready`), 'Prometheus to be ready', {
      timeoutMs: 20_000,
      giveUp: () => (running(child) ? undefined : 'prometheus exited'),
      detail: () => log,
    });
  } catch (err) {
    await stop();
    throw err;
  }
  const api = async <T>(path: string): Promise<T> => ((await (await fetch(`${url}/api/v1/${path}`)).json()) as { data: T }).data;
  const query = async (expr: string): Promise<PromResult> =>
    (await fetch(`${url}/api/v1/query?${new URLSearchParams({ query: expr }).toString()}`)).json() as Promise<PromResult>;
  return { url, query, api, stop };
}

/** Waits until Prometheus has scraped the relay three times: rate() needs two samples in its window. */
export async function scrapedThrice(prometheus: RunningPrometheus): Promise<void> {
  await waitUntil(async () => {
    const r = await prometheus.query('count_over_time(up{job="relay"}[1m]) >= 3 and up{job="relay"} == 1');
    return r.data.result.length === 1;
  }, 'Prometheus to have scraped the relay three times', 20_000);
}
