// infra/prometheus/: the rules parse (promtool check rules), every alert fires on series that should
// wake someone and stays quiet on healthy ones (promtool test rules), and the sample config is valid.
import { describe, expect, it } from 'vitest';
import { promtool } from './helpers/prometheus.js';

const dir = new URL('../infra/prometheus/', import.meta.url).pathname;

describe('Prometheus rules', () => {
  it('promtool check rules accepts relay-rules.yml', () => {
    const r = promtool(['check', 'rules', 'relay-rules.yml'], dir);
    expect(r.status, r.stdout + r.stderr).toBe(0);
  });

  it('promtool test rules passes relay-rules.test.yml: each alert fires on trouble and not on health', () => {
    const r = promtool(['test', 'rules', 'relay-rules.test.yml'], dir);
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/SUCCESS/);
  });

  it('promtool check config accepts the sample prometheus.yml with its rules', () => {
    const r = promtool(['check', 'config', 'prometheus.yml'], dir);
    expect(r.status, r.stdout + r.stderr).toBe(0);
  });
});
