// The stream caps' count: streams other nodes hold for the owner (their census answers, asked at
// open) plus this node's own, a reopen on a held channel adding nothing.
import { describe, expect, it } from 'vitest';
import { checkStreamCaps } from '../../services/gateway/ownership/stream-caps.js';

const caps = { maxStreamsPerAccount: 3, maxStreamsPerKey: 2 };
const local = (channels: Array<string | null>) => ({ ofOwner: () => channels.map((channel) => ({ channel })) as never[] });
const account = { id: 's', account: 'acct', clientId: 'k', channel: 'c.example.net' };
const bridge = { id: 's', account: null, clientId: 'k', channel: null };

describe('stream caps counted across the mesh', () => {
  it.each([
    { what: 'nothing held anywhere', s: account, here: [], remote: { count: 0, holdsKey: false }, refused: false },
    { what: 'two elsewhere, none here', s: account, here: [], remote: { count: 2, holdsKey: false }, refused: false },
    { what: 'two elsewhere, one here', s: account, here: ['x'], remote: { count: 2, holdsKey: false }, refused: true },
    { what: 'three here', s: account, here: ['x', 'y', 'z'], remote: { count: 0, holdsKey: false }, refused: true },
    { what: 'three elsewhere, one on this channel (a replacement)', s: account, here: [], remote: { count: 3, holdsKey: true }, refused: false },
    { what: 'three here, one on this channel (a replacement)', s: account, here: ['x', 'y', 'c.example.net'], remote: { count: 0, holdsKey: false }, refused: false },
    { what: 'a bridge key with one elsewhere and one here', s: bridge, here: [null], remote: { count: 1, holdsKey: false }, refused: true },
    { what: 'a bridge key with one elsewhere', s: bridge, here: [], remote: { count: 1, holdsKey: false }, refused: false },
  ])('$what: refused $refused', ({ s, here, remote, refused }) => {
    const check = (): void => checkStreamCaps(s, caps, local(here), remote);
    if (refused) expect(check).toThrow(/most allowed/);
    else expect(check).not.toThrow();
  });

  it('no cap (0) counts nothing', () => {
    expect(() => checkStreamCaps(account, { maxStreamsPerAccount: 0, maxStreamsPerKey: 0 }, local(['a', 'b', 'c', 'd']), { count: 99, holdsKey: false })).not.toThrow();
  });
});
