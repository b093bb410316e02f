// How the console writes times, durations and rates.

export function ago(iso: string | null, now = Date.now()): string {
  if (iso === null) return 'never';
  return `${duration((now - Date.parse(iso)) / 1000)} ago`;
}

export function duration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`;
}

export function rate(n: number | null): string {
  return n === null ? '–' : n >= 100 ? n.toFixed(0) : n.toFixed(2).replace(/\.?0+$/, '');
}

export function time(iso: string): string {
  return iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}
