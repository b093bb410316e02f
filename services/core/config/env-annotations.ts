// The annotations a variable's schema carries besides its type: how it is read (a duration, a size)
// and whether it may be shown. The loader converts by them, `relay config` and the env examples show
// by them.

import { DURATION_PATTERN, SIZE_PATTERN } from '../units.js';

/** Never echoed: not in error messages, `relay config` or the env examples. */
export const secret = { 'x-secret': true } as const;
/** A duration that becomes a timer, so at most 24 days (Node's timers hold 2^31-1 ms). */
export const duration = { pattern: DURATION_PATTERN, 'x-unit': 'duration' } as const;
/** A duration only compared or handed to NATS (retention, cache lifetimes): no timer bound. */
export const lifetime = { pattern: DURATION_PATTERN, 'x-unit': 'duration', 'x-timer': false } as const;
/** Bytes, written like 512KiB or 1GiB. */
export const size = { pattern: SIZE_PATTERN, 'x-unit': 'size' } as const;
