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

// Times on the command line (--expires, --since). Only two forms, so that a typo cannot become a
// date: Date.parse('1') is the year 2001, and a ban "until 2001" never bites.

/** The latest time the CLI accepts: ISO 8601 years have four digits (and Date ends in 275760). */
export const LATEST_TIME_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2}))?$/i;

/**
 * Epoch milliseconds of an ISO 8601 date (YYYY-MM-DD, midnight UTC) or date-time
 * (YYYY-MM-DDTHH:MM[:SS][.sss] with Z or ±HH:MM); null for anything else, 2030-02-30 included.
 */
export function parseIsoTime(text: string): number | null {
  const m = ISO_TIME.exec(text.trim());
  if (m === null) return null;
  const n = (i: number): number => Number(m[i] ?? 0);
  const [year, month, day, hour, minute, second] = [n(1), n(2), n(3), n(4), n(5), n(6)];
  const millis = Number((m[7] ?? '').padEnd(3, '0').slice(0, 3));
  const zone = (m[8] ?? 'Z').toUpperCase();
  const [zoneHours, zoneMinutes] = zone === 'Z' ? [0, 0] : [Number(zone.slice(1, 3)), Number(zone.slice(4, 6))];
  if (hour > 23 || minute > 59 || second > 59 || zoneHours > 23 || zoneMinutes > 59) return null;
  const local = Date.UTC(year, month - 1, day, hour, minute, second, millis);
  // Date.UTC rolls 2030-02-30 over into March (and years below 100 into the 1900s): a mistake
  // shows as a field that changed.
  const d = new Date(local);
  if (d.getUTCFullYear() !== year || d.getUTCMonth() !== month - 1 || d.getUTCDate() !== day) return null;
  return local - (zone.startsWith('-') ? -1 : 1) * (zoneHours * 60 + zoneMinutes) * 60_000;
}

export type ParsedTime = { ok: true; iso: string } | { ok: false; problem: string };

const FORMS = 'a duration like 30d, 12h or 90m, or an ISO 8601 date or time like 2030-01-31 or 2030-01-31T12:00:00Z';

/** A time later than now: a duration from now ("30d") or an ISO 8601 date or date-time. */
export function parseExpiry(text: string, now = Date.now()): ParsedTime {
  const duration = parseDuration(text);
  const t = duration !== null ? now + duration : parseIsoTime(text);
  if (t === null) return { ok: false, problem: `must be ${FORMS}` };
  if (!Number.isFinite(t) || t > LATEST_TIME_MS) return { ok: false, problem: 'must not be later than 9999-12-31' };
  if (t <= now) return { ok: false, problem: 'must be in the future' };
  return { ok: true, iso: new Date(t).toISOString() };
}

/** A time to read from: a duration back from now ("10m") or an ISO 8601 date or date-time. */
export function parseSince(text: string, now = Date.now()): ParsedTime {
  const duration = parseDuration(text);
  const t = duration !== null ? now - duration : parseIsoTime(text);
  if (t === null) return { ok: false, problem: `must be ${FORMS.replace('30d, 12h or 90m', '10m, 2h or 7d')}` };
  if (!Number.isFinite(t) || t < 0 || t > LATEST_TIME_MS) return { ok: false, problem: 'must fall between 1970-01-01 and 9999-12-31' };
  return { ok: true, iso: new Date(t).toISOString() };
}

/** A whole number written in digits (no sign, exponent or hex) that JavaScript holds exactly; null otherwise. */
export function parseWholeNumber(text: string): number | null {
  const t = text.trim();
  if (!/^\d+$/.test(t)) return null;
  const n = Number(t);
  return Number.isSafeInteger(n) ? n : null;
}
