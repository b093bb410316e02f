// How the CLI prints: JSON for scripts (--json), aligned columns for people. Cells often hold what
// clients or other operators wrote (ban reasons, user agents, labels), so control characters in
// them are shown as escapes: they must not erase, recolour or reorder the operator's terminal.
import { escapeControlChars, terminalSafeJson } from '../core/display.js';

export function printJson(value: unknown): void {
  process.stdout.write(terminalSafeJson(value, 2) + '\n');
}

export function printTable(rows: ReadonlyArray<Record<string, string>>, columns: readonly string[], empty: string): void {
  if (rows.length === 0) {
    process.stdout.write(empty + '\n');
    return;
  }
  const shown = rows.map((r) => columns.map((c) => escapeControlChars(r[c] ?? '')));
  const widths = columns.map((c, i) => Math.max(c.length, ...shown.map((cells) => cells[i]!.length)));
  const line = (cells: readonly string[]): string =>
    cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ').trimEnd();
  process.stdout.write(line(columns.map((c) => c.toUpperCase())) + '\n');
  for (const cells of shown) process.stdout.write(line(cells) + '\n');
}
