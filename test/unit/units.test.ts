// Human units as operators write them (configuration, CLI): durations, sizes, times and whole
// numbers. Each row is what a person types and what the relay must make of it.

import { describe, expect, it } from 'vitest';
import { parseDuration, parseExpiry, parseIsoTime, parseSince, parseSize, parseWholeNumber } from '../../services/core/units.js';

describe('durations', () => {
  it.each([
    ['250ms', 250],
    ['90s', 90_000],
    ['1.5s', 1500],
    ['10m', 600_000],
    ['24h', 86_400_000],
    ['30d', 2_592_000_000],
    [' 5s ', 5000],
    ['0s', 0],
  ])('%s is %d ms', (text, ms) => expect(parseDuration(text)).toBe(ms));

  it.each(['', '5', '5 s', '5S', '-5s', '5w', '1e3s', 's', '.5s', '5s5m'])('"%s" is not a duration', (text) => expect(parseDuration(text)).toBeNull());
});

describe('sizes', () => {
  it.each([
    ['1048576', 1_048_576],
    ['512B', 512],
    ['1KB', 1000],
    ['1KiB', 1024],
    ['1.5MiB', 1_572_864],
    ['10GB', 10_000_000_000],
    ['1GiB', 1_073_741_824],
    ['2TiB', 2 * 1024 ** 4],
    [' 64KiB ', 65_536],
  ])('%s is %d bytes', (text, bytes) => expect(parseSize(text)).toBe(bytes));

  it.each(['', 'KiB', '1kib', '1 GiB', '-1', '1e6', '1PB', '0x10'])('"%s" is not a size', (text) => expect(parseSize(text)).toBeNull());
});

describe('ISO 8601 times', () => {
  it.each([
    ['2030-01-31', Date.UTC(2030, 0, 31)],
    ['2030-01-31T12:00Z', Date.UTC(2030, 0, 31, 12)],
    ['2030-01-31T12:00:30.5Z', Date.UTC(2030, 0, 31, 12, 0, 30, 500)],
    ['2030-01-31T12:00:00+02:00', Date.UTC(2030, 0, 31, 10)],
    ['2030-01-31T12:00:00-05:30', Date.UTC(2030, 0, 31, 17, 30)],
    ['2028-02-29', Date.UTC(2028, 1, 29)],
  ])('%s is read exactly', (text, ms) => expect(parseIsoTime(text)).toBe(ms));

  it.each(['2030-02-30', '2029-02-29', '2030-13-01', '2030-01-31T24:00Z', '2030-01-31T12:60Z', '2030-01-31T12:00', '31/01/2030', '0099-01-01'])(
    '"%s" is refused, not rolled over',
    (text) => expect(parseIsoTime(text)).toBeNull(),
  );
});

describe('expiries and starting points', () => {
  const now = Date.UTC(2026, 10, 23, 12);

  it('an expiry is a duration from now or a future date', () => {
    expect(parseExpiry('30d', now)).toEqual({ ok: true, iso: '2026-12-23T12:00:00.000Z' });
    expect(parseExpiry('2030-01-31', now)).toEqual({ ok: true, iso: '2030-01-31T00:00:00.000Z' });
    expect(parseExpiry('2020-01-01', now)).toEqual({ ok: false, problem: 'must be in the future' });
    expect(parseExpiry('0s', now)).toEqual({ ok: false, problem: 'must be in the future' });
    expect(parseExpiry('100000000d', now)).toEqual({ ok: false, problem: 'must not be later than 9999-12-31' });
    expect(parseExpiry('soon', now)).toMatchObject({ ok: false, problem: expect.stringMatching(/^must be a duration like 30d/) });
  });

  it('a starting point is a duration back from now or a date, within 1970 to 9999', () => {
    expect(parseSince('10m', now)).toEqual({ ok: true, iso: '2026-11-23T11:50:00.000Z' });
    expect(parseSince('2026-11-01', now)).toEqual({ ok: true, iso: '2026-11-01T00:00:00.000Z' });
    expect(parseSince('100000d', now)).toEqual({ ok: false, problem: 'must fall between 1970-01-01 and 9999-12-31' });
    expect(parseSince('yesterday', now)).toMatchObject({ ok: false, problem: expect.stringMatching(/^must be a duration like 10m/) });
  });
});

describe('whole numbers', () => {
  it.each([
    ['0', 0],
    ['42', 42],
    [' 7 ', 7],
    ['9007199254740991', Number.MAX_SAFE_INTEGER],
  ])('%s is %d', (text, n) => expect(parseWholeNumber(text)).toBe(n));

  it.each(['', '-1', '+1', '1.0', '1e3', '0x10', '9007199254740993', 'ten'])('"%s" is not a whole number', (text) => expect(parseWholeNumber(text)).toBeNull());
});
