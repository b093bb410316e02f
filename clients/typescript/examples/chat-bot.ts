// A chat bot: prints every chat line and direct message it hears on one server and answers `!ping`
// with `pong` (in the channel, or privately when asked privately).
//
//   npm start                                          # terminal 1: the development relay
//   npx tsx clients/typescript/examples/chat-bot.ts    # terminal 2
//
// Environment (all optional against `npm start`): RELAY_URL (http://127.0.0.1:8080), RELAY_SERVER
// (play.example.net), BOT_NAME (PingBot), RELAY_TOKEN (the game session token; offline:<BOT_NAME>
// for the development relay), RELAY_CLIENT_ID and RELAY_CLIENT_SECRET (from .data/dev-key.json).

// In your project: import { RelayClient } from '@channel-relay/client';
import { RelayClient } from '../src/index.js';
import { relaySettings } from './dev.js';

const name = process.env['BOT_NAME'] ?? 'PingBot';
const server = process.env['RELAY_SERVER'] ?? 'play.example.net';
const token = process.env['RELAY_TOKEN'] ?? `offline:${name}`;

/** A chat component as plain text: a string, or the text of a JSON text component and its extras. */
function plain(c: unknown): string {
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) return c.map(plain).join('');
  if (typeof c === 'object' && c !== null) {
    const o = c as { text?: unknown; extra?: unknown };
    return `${typeof o.text === 'string' ? o.text : ''}${o.extra === undefined ? '' : plain(o.extra)}`;
  }
  return '';
}

const bot = new RelayClient({
  ...relaySettings(),
  server,
  userAgent: 'chat-bot-example/1.0.0+0000000000000000000000000000000000000000',
  // Asked once at start and again if the relay says the session expired (401).
  token: () => token,
});

bot.on('state', (s) => {
  if (s.state === 'reconnecting') console.error(`[relay] reconnecting in ${s.delayMs} ms (${s.reason})`);
  if (s.state === 'closed' && s.reason !== 'client_closed') {
    // Final: evicted (this account connected elsewhere), banned, key revoked or expired, ...
    console.error(`[relay] closed for good: ${s.reason}: ${s.message}`);
    process.exitCode = 1;
  }
});

bot.on('payload', ({ payload, meta }) => {
  // `payload.type` narrows the payload: here it is a chat or a direct message.
  if (payload.type !== 'chat' && payload.type !== 'message') return;
  const text = plain(payload.message);
  const direct = payload.type === 'message';
  console.log(`[${meta.channel}] ${meta.uuid}${direct ? ' (to me)' : ''}: ${text}`);
  if (text.trim() !== '!ping') return;
  const reply = direct ? bot.send({ type: 'message', to: meta.uuid, message: 'pong' }) : bot.send({ type: 'chat', message: 'pong' });
  reply.catch((e: unknown) => console.error(`[relay] could not answer: ${e instanceof Error ? e.message : String(e)}`));
});

await bot.connect().catch((e: unknown) => {
  console.error(`[relay] cannot connect: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
console.error(`[relay] ${name} is listening on ${server}; say !ping there (Ctrl-C stops it)`);
process.once('SIGINT', () => bot.close());
process.once('SIGTERM', () => bot.close());
