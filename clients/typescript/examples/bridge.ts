// A bridge: relays each line typed on standard input to several servers at once, as one player,
// the way a Discord or network bridge does. It has no game session: its key (with
// irc.connection.unauthenticated) authenticates it, each message is a re-attribution envelope naming
// the player and the server, and its one stream hears every server.
//
//   npm start                                        # terminal 1: the development relay
//   npx tsx clients/typescript/examples/bridge.ts    # terminal 2: type lines, Ctrl-D ends
//
// Environment (all optional against `npm start`): RELAY_URL, RELAY_SERVERS (comma-separated;
// play.example.net,survival.example.net), BRIDGE_USER (the UUID to speak as; by default the
// offline-mode UUID of the player "Bridge"), BRIDGE_AGENT, RELAY_CLIENT_ID and RELAY_CLIENT_SECRET.

import { createHash } from 'node:crypto';
import { createInterface } from 'node:readline';
// In your project: import { RelayClient } from '@channel-relay/client';
import { RelayClient } from '../src/index.js';
import { relaySettings } from './dev.js';

/** The UUID an offline-mode server gives a player name (a name-based UUID of "OfflinePlayer:<name>"). */
function offlineUuid(name: string): string {
  const b = createHash('md5').update(`OfflinePlayer:${name}`).digest();
  b[6] = (b[6]! & 0x0f) | 0x30;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

const servers = (process.env['RELAY_SERVERS'] ?? 'play.example.net,survival.example.net').split(',').map((s) => s.trim()).filter((s) => s !== '');
const user = process.env['BRIDGE_USER'] ?? offlineUuid('Bridge');
const agent = process.env['BRIDGE_AGENT'] ?? 'bridge-example/1.0';

// No token and no server: a bridge, with one stream on every channel.
const bridge = new RelayClient({ ...relaySettings(), userAgent: 'bridge-example/1.0.0+0000000000000000000000000000000000000000' });

bridge.on('state', (s) => {
  if (s.state === 'closed' && s.reason !== 'client_closed') {
    console.error(`[relay] closed for good: ${s.reason}: ${s.message}`);
    process.exitCode = 1;
  }
});
bridge.on('payload', ({ payload, meta }) => {
  if (payload.type === 'chat' && meta.uuid !== user && servers.includes(meta.channel)) {
    console.log(`[${meta.channel}] ${meta.uuid}: ${typeof payload.message === 'string' ? payload.message : JSON.stringify(payload.message)}`);
  }
});

await bridge.connect().catch((e: unknown) => {
  console.error(`[relay] cannot connect: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
console.error(`[relay] bridging standard input to ${servers.join(', ')} as ${user}; type a line (Ctrl-D ends)`);

for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() === '') continue;
  try {
    // One POST, one envelope per server: each is delivered on the server its `host` names.
    const { accepted } = await bridge.sendAs(servers.map((host) => ({ user, agent, host, message: { type: 'chat' as const, message: line } })));
    console.error(`[relay] sent to ${accepted} of ${servers.length} servers`);
  } catch (e) {
    console.error(`[relay] not sent: ${e instanceof Error ? e.message : String(e)}`);
  }
}
bridge.close();
