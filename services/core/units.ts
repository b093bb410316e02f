// Human units in configuration and on the command line: durations ("90s", "30d") and sizes ("1GiB").

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;
const DURATION_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Milliseconds, or null when the text is not a duration like 500ms, 90s, 30m, 12h or 7d. */
export function parseDuration(text: string): number | null {
  const m = DURATION.exec(text.trim());
  if (m === null) return null;
  return Math.round(Number(m[1]) * DURATION_MS[m[2]!]!);
}

const SIZE = /^(\d+(?:\.\d+)?)(B|KB|KiB|MB|MiB|GB|GiB|TB|TiB)?$/;
const SIZE_BYTES: Record<string, number> = {
  B: 1,
  KB: 1e3,
  KiB: 1024,
  MB: 1e6,
  MiB: 1024 ** 2,
  GB: 1e9,
  GiB: 1024 ** 3,
  TB: 1e12,
  TiB: 1024 ** 4,
};

/** Bytes, or null when the text is not a size like 1048576, 512MiB or 10GB. */
export function parseSize(text: string): number | null {
  const m = SIZE.exec(text.trim());
  if (m === null) return null;
  return Math.round(Number(m[1]) * SIZE_BYTES[m[2] ?? 'B']!);
}

export const DURATION_PATTERN = '^\\s*\\d+(\\.\\d+)?(ms|s|m|h|d)\\s*$';
export const SIZE_PATTERN = '^\\s*\\d+(\\.\\d+)?(B|KB|KiB|MB|MiB|GB|GiB|TB|TiB)?\\s*$';

/** "2026-01-01T00:00:00Z" or a duration from now ("30d"), as an ISO string; null if neither. */
export function parseExpiry(text: string, now = Date.now()): string | null {
  const ms = parseDuration(text);
  if (ms !== null) return new Date(now + ms).toISOString();
  const t = Date.parse(text);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}
