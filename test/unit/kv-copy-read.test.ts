// A walk of a bucket's copy by direct gets takes an answer only when it is that stream's next entry:
// one of another stream, or one that does not move forward, would skip entries, and the keys only
// they hold would be taken as gone (a ban dropped).
import { headers } from '@nats-io/nats-core';
import { describe, expect, it } from 'vitest';
import { isNextEntry } from '../../services/core/kv-copy-read.js';

const STREAM = 'RELAY_COPY_relay-bans-c_AT_A';
const BUCKET = 'relay-bans-c';

function answer(seq: number, subject = `$KV.${BUCKET}.k`, stream: string | null = STREAM): { seq: number; subject: string; header?: ReturnType<typeof headers> } {
  if (stream === null) return { seq, subject };
  const h = headers();
  h.set('Nats-Stream', stream);
  return { seq, subject, header: h };
}

describe("a copy walk's next entry", () => {
  it("takes the stream's entry past the last one read", () => {
    expect(isNextEntry(answer(5), 4, STREAM, BUCKET)).toBe(true);
    expect(isNextEntry(answer(90), 4, STREAM, BUCKET)).toBe(true);
  });

  it('refuses an entry at or before the last one read', () => {
    expect(isNextEntry(answer(4), 4, STREAM, BUCKET)).toBe(false);
    expect(isNextEntry(answer(1), 4, STREAM, BUCKET)).toBe(false);
  });

  it("refuses another stream's answer, one without headers, and a subject outside the bucket", () => {
    expect(isNextEntry(answer(5, undefined, 'KV_relay-bans-c'), 4, STREAM, BUCKET)).toBe(false);
    expect(isNextEntry(answer(5, undefined, null), 4, STREAM, BUCKET)).toBe(false);
    expect(isNextEntry(answer(5, '$KV.relay-bans-a.k'), 4, STREAM, BUCKET)).toBe(false);
  });
});
