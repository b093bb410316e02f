// How a stream's limits read in sentences (`relay setup`, start-up warnings): durations and sizes in
// the units the environment variables use, -1 and 0 as words.

import { DiscardPolicy, StorageType } from '@nats-io/jetstream';
import type { StreamLimits } from './nats-layout.js';

const DURATION_UNITS: ReadonlyArray<[string, number]> = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1000],
];
const SIZE_UNITS: ReadonlyArray<[string, number]> = [
  ['TiB', 2 ** 40],
  ['GiB', 2 ** 30],
  ['MiB', 2 ** 20],
  ['KiB', 2 ** 10],
];

function duration(nanoseconds: number): string {
  const ms = Math.round(nanoseconds / 1e6);
  for (const [unit, size] of DURATION_UNITS) if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

function bytes(n: number): string {
  for (const [unit, size] of SIZE_UNITS) if (n >= size && n % size === 0) return `${n / size}${unit}`;
  return `${n}B`;
}

/** One limit's value as an operator would write it. */
export function limitText(field: keyof StreamLimits, value: number | string): string {
  switch (field) {
    case 'max_age':
      return value === 0 ? 'for ever' : duration(Number(value));
    case 'duplicate_window':
      return duration(Number(value));
    case 'max_bytes':
      return Number(value) < 0 ? 'unbounded' : bytes(Number(value));
    case 'max_msgs_per_subject':
    case 'max_msgs':
      return Number(value) < 0 ? 'unbounded' : String(value);
    case 'discard':
      return value === DiscardPolicy.Old ? 'oldest first' : 'refuse new';
    case 'storage':
      return value === StorageType.Memory ? 'memory' : 'file';
    case 'num_replicas':
      return String(value);
  }
}

/** The readable name of a limit. */
export const LIMIT_NAMES: Record<keyof StreamLimits, string> = {
  num_replicas: 'replicas',
  max_age: 'max age',
  max_bytes: 'max bytes',
  max_msgs_per_subject: 'messages per subject',
  max_msgs: 'max messages',
  duplicate_window: 'duplicate window',
  discard: 'discard',
  storage: 'storage',
};
