// One stream that cannot take a frame (a bug, a frame it cannot write) ends with an error close and
// costs the others nothing: the fan-out goes on to every stream after it (delivery/fan-out.ts).
import { describe, expect, it } from 'vitest';
import { fanOut } from '../../services/gateway/delivery/fan-out.js';
import type { Frame } from '../../services/gateway/delivery/frame.js';
import type { ClientStream } from '../../services/gateway/stream/client-stream.js';

const frame: Frame = { seq: 7, typeBit: 1, isMessage: false, isKeepalive: false, isPresence: false, sender: 'someone', to: null, publishedAt: 0, bytes: Buffer.from('x') };

function stream(name: string, log: string[], fails = false): ClientStream {
  return {
    account: name,
    receiveMask: 0xffff,
    bridge: false,
    deliver: () => {
      if (fails) throw new Error('cannot write this frame');
      log.push(`${name} got it`);
      return 'queued';
    },
    close: (reason: string) => void log.push(`${name} closed: ${reason}`),
  } as unknown as ClientStream;
}

describe('the fan-out', () => {
  it('closes a stream whose delivery throws with an error and still reaches every other stream', () => {
    const log: string[] = [];
    const heard = fanOut([stream('first', log), stream('broken', log, true), stream('last', log)], frame, null, null, 'play.example.net');
    expect(heard).toBe(true);
    expect(log).toEqual(['first got it', 'broken closed: error', 'last got it']);
  });
});
