// Tables for people and targets checked against ratios measured in the same run.

export interface Target {
  name: string;
  /** The measured value (a ratio or a figure) and the bound it must meet. */
  value: number;
  bound: number;
  /** 'min': value >= bound; 'max': value <= bound. */
  kind: 'min' | 'max';
  unit?: string;
}

export function met(t: Target): boolean {
  // A 'min' ratio is infinite when the peer met the bound at no rate and the relay did: met.
  // A 'max' value is infinite when the measurement failed: not met. NaN is never met.
  return t.kind === 'min' ? t.value >= t.bound : Number.isFinite(t.value) && t.value <= t.bound;
}

export function table(headers: string[], rows: Array<Array<string | number>>): string {
  const cells = rows.map((r) => r.map((c) => (typeof c === 'number' ? fmt(c) : c)));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]): string => '| ' + r.map((c, i) => c.padEnd(widths[i]!)).join(' | ') + ' |';
  return [line(headers), '|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|', ...cells.map(line)].join('\n');
}

export function fmt(n: number): string {
  if (n === Infinity) return 'inf';
  if (!Number.isFinite(n)) return 'n/a';
  if (Math.abs(n) >= 1000) return Math.round(n).toLocaleString('en-US');
  if (Math.abs(n) >= 100) return n.toFixed(0);
  if (Math.abs(n) >= 10) return n.toFixed(1);
  return n.toFixed(2);
}

export function targetTable(targets: Target[]): string {
  return table(
    ['target', 'measured', 'bound', 'met'],
    targets.map((t) => [t.name, `${fmt(t.value)}${t.unit ?? ''}`, `${t.kind === 'min' ? '>=' : '<='} ${fmt(t.bound)}${t.unit ?? ''}`, met(t) ? 'yes' : 'NO']),
  );
}

export interface ScenarioResult {
  scenario: string;
  /** Markdown: tables and notes. */
  text: string;
  targets: Target[];
  data: unknown;
}

export interface ScenarioOptions {
  quick: boolean;
  /** Run on three clustered nats-servers with everything replicated three times (scale only). */
  cluster: boolean;
  /** Scale only: the rest of a million-stream mesh simulated by bench/tools/claim-writer.ts. */
  million?: boolean;
  log: (line: string) => void;
}
