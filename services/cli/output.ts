// How the CLI prints: JSON for scripts (--json), aligned columns for people.

export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

export function printTable(rows: ReadonlyArray<Record<string, string>>, columns: readonly string[], empty: string): void {
  if (rows.length === 0) {
    process.stdout.write(empty + '\n');
    return;
  }
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => (r[c] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ').trimEnd();
  process.stdout.write(line(columns.map((c) => c.toUpperCase())) + '\n');
  for (const r of rows) process.stdout.write(line(columns.map((c) => r[c] ?? '')) + '\n');
}
