// How the console writes times, durations, rates and text it did not write itself.

import { UNSAFE_TEXT_CHARS } from '../../schemas/unsafe-text.js';

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

const UNSAFE = new RegExp(`[${UNSAFE_TEXT_CHARS}]`, 'gu');

/**
 * Text that came from a record anyone with a role's credentials could write (a ban, a claim, a
 * heartbeat, a stored payload): the characters of the one text rule shown as escapes, as the CLI
 * shows them, so none can reorder or hide what an operator reads. The API itself keeps values exact.
 */
export function shown(text: string): string {
  return text.replace(UNSAFE, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}
