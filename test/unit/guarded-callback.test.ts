// What a subscription callback throws stays in the callback: nats.js would otherwise stop reading the
// connection (core/guarded-callback.ts). The sites' own tests show it against a real nats-server.

import type { Msg } from '@nats-io/nats-core';
import { describe, expect, it } from 'vitest';
import { guarded, loggedThrows } from '../../services/core/guarded-callback.js';

const msg = (subject: string): Msg => ({ subject }) as Msg;

describe('a guarded subscription callback', () => {
  it('passes each message on, and reports what a message threw with its subject instead of throwing', () => {
    const seen: string[] = [];
    const reported: Array<[string, string]> = [];
    const cb = guarded(
      (_err, m) => {
        if (m.subject === 'bad') throw new Error('boom');
        seen.push(m.subject);
      },
      (err, subject) => reported.push([(err as Error).message, subject]),
    );
    expect(() => {
      void cb(null, msg('one'));
      void cb(null, msg('bad'));
      void cb(null, msg('two'));
    }).not.toThrow();
    expect(seen).toEqual(['one', 'two']);
    expect(reported).toEqual([['boom', 'bad']]);
  });

  it('drops what a failing report throws', () => {
    const cb = guarded(
      () => {
        throw new Error('boom');
      },
      () => {
        throw new Error('the report failed too');
      },
    );
    expect(() => void cb(null, msg('x'))).not.toThrow();
  });

  it('logs a callback that throws on every message once per interval, naming the subject', () => {
    const lines: Array<{ fields: Record<string, unknown>; message: string }> = [];
    const report = loggedThrows({ warn: (fields: Record<string, unknown>, message: string) => void lines.push({ fields, message }) } as never, 'the census');
    for (let i = 0; i < 5; i++) report(new Error('again'), 'relay.owner-census.ask');
    expect(lines).toHaveLength(1);
    expect(lines[0]!.message).toBe('the census failed on a message; the subscription goes on');
    expect(lines[0]!.fields['subject']).toBe('relay.owner-census.ask');
  });
});
