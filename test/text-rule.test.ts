// Issue 26, the one text rule (DESIGN.md section 7): every string a client or an operator controls
// that the relay shows to another client or to an operator, in one table: where it enters, whom it
// reaches, and what the rule does there. Refused where the sender can be told (400 naming the field,
// nothing stored); escaped where refusing is impossible or wrong (a cracked client's ban record, an
// operator's name, log lines); dropped where it comes from elsewhere (the profile API's name). Each
// refused character is sent in every spelling its way in allows: Latin-1 bytes and UTF-8 in headers,
// raw UTF-8 and \u escapes in JSON, percent-escapes in a query, 200 harmless characters in.
//
// Not in the table, because no client chooses them: close events and SSE comments (the relay's own
// sentences and validated channel names), metrics labels (closed sets), bearer tokens (never shown),
// Idempotency-Key and Last-Event-ID (refused unless of their own strict shape). Payload content is
// the game's and relayed as sent; the CLI escapes it on a terminal (test/hardening-cli.test.ts).
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BanRecord } from '../schemas/records.js';
import { currentActor } from '../services/core/audit.js';
import type { CreatedKey } from '../services/core/keys.js';
import { Scope } from '../services/core/scopes.js';
import { claimKey } from '../services/gateway/ownership/claim-keys.js';
import { startAdmin, type AdminFixture } from './helpers/admin.js';
import { RelayFixture, type Player, type PostResult } from './helpers/relay.js';
import type { SseStream } from './helpers/sse-client.js';

const CH = 'text-rule.example.net';
// What a terminal, a log or a page would act on; written out here, apart from schemas/text.ts.
const RAW = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const PAD = 'x'.repeat(200);
const REFUSED: ReadonlyArray<readonly [string, string]> = [
  ['an ESC (C0)', '\u001b[2J'], ['a tab (C0)', '\t'], ['a DEL', '\u007f'], ['a NEL (C1)', '\u0085'], ['a one-byte CSI (C1)', '\u009b31m'],
  ['a line separator', '\u2028'], ['a paragraph separator', '\u2029'], ['a left-to-right embedding', '\u202a'],
  ['a right-to-left override', '\u202e'], ['a first strong isolate', '\u2068'], ['a lone surrogate', '\ud800'],
];

let relay: RelayFixture;
let admin: AdminFixture;
let key: CreatedKey;
let bridge: CreatedKey;
let sender: Player;
let listener: SseStream;
let port: number;

beforeAll(async () => {
  relay = await RelayFixture.start({ env: { META_AUTHORITATIVE_SENDER: 'true', LOG_LEVEL: 'debug', RATE_LIMIT_PER_SECOND: '0' } });
  admin = await startAdmin(relay.nats);
  port = Number(new URL(relay.url).port);
  key = await relay.createKey();
  bridge = await relay.createKey([Scope.Unauthenticated, Scope.Establish, Scope.Send, Scope.Receive]);
  sender = relay.player();
  listener = await relay.connect(relay.headers(relay.player(), key, CH));
});
afterAll(async () => {
  await admin?.close();
  await relay?.close();
});

/** How a header can carry `text`: Latin-1 bytes when every character fits one, and UTF-8; none for what Node refuses (C0 but tab, DEL) or no byte can say (a lone surrogate). */
function headerSpellings(text: string): Array<readonly [string, BufferEncoding]> {
  if (/[\u0000-\u0008\u000a-\u001f\u007f\ud800-\udfff]/.test(text)) return [];
  return [...(/^[\u0000-\u00ff]*$/.test(text) ? [['Latin-1 bytes', 'latin1'] as const] : []), ['UTF-8', 'utf8'] as const];
}

/** A JSON body as JSON.stringify writes it (UTF-8), and with every character outside printable ASCII as a \u escape. */
function jsonSpellings(body: unknown): Array<readonly [string, string]> {
  const text = JSON.stringify(body);
  return [['UTF-8', text], ['\\u escapes', text.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)]];
}

/** One request written on a socket: its header block in `encoding`, its body in UTF-8; the answer once the relay closes the connection. */
function send(method: 'GET' | 'POST', target: string, headers: Record<string, string>, body: string | null, encoding: BufferEncoding = 'utf8'): Promise<Answer> {
  const all = { host: `127.0.0.1:${port}`, connection: 'close', ...headers, ...(body !== null ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } : { accept: 'text/event-stream' }) };
  const head = `${method} ${target} HTTP/1.1\r\n${Object.entries(all).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
  return new Promise((resolve, reject) => {
    // Written, not ended: a client that half-closes has left, and is answered nothing.
    const socket = connect(port, '127.0.0.1', () => socket.write(Buffer.concat([Buffer.from(head, encoding), Buffer.from(body ?? '', 'utf8')])));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const [statusLine = '', answer = ''] = Buffer.concat(chunks).toString('utf8').split(/\r\n(?:.*\r\n)*?\r\n/, 2);
      resolve({ status: Number(statusLine.split(' ')[1] ?? 0), json: JSON.parse(answer) as Record<string, unknown> });
    });
  });
}

interface Answer {
  status: number;
  json: Record<string, unknown>;
}
const answerOf = (r: PostResult): Answer => ({ status: r.status, json: r.body });

const chat = (message: string) => ({ type: 'chat', message });
const envelope = (fields: Record<string, string>) => [{ user: sender.uuid, agent: 'bridge/1', ...fields, message: chat('enveloped') }];

/** Nothing of a refused request was stored: the next pair the listener hears is a sentinel posted after it. */
async function expectNothingStored(): Promise<void> {
  const tag = `sentinel ${Math.random()}`;
  expect((await relay.post(chat(tag), relay.headers(sender, key, CH))).status).toBe(200);
  expect((await listener.pairsUntil((p) => p.data['message'] === tag)).map((p) => p.data['message'])).toEqual([tag]);
}

/** A refusal: status, code, the JSON path in `details` when given, a message that quotes nothing raw; then nothing stored. */
async function expectRefused(res: Answer, status: number, code: string, path?: string): Promise<void> {
  expect([res.status, res.json['error']], JSON.stringify(res.json)).toEqual([status, code]);
  expect(String(res.json['message'])).not.toMatch(RAW);
  if (path !== undefined) expect(res.json['details']).toContainEqual(expect.objectContaining({ entry: 0, path }));
  await expectNothingStored();
}

/** The visible escape the CLI, logs and ban records show for a character (\x9b, \u202e). */
const escapeOf = (c: string): string => (c.charCodeAt(0) <= 0xff ? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}` : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
/** `text` as an operator is shown it: each refused character as its visible escape. */
const shown = (text: string): string => [...text].map((c) => (RAW.test(c) ? escapeOf(c) : c)).join('');

interface Field {
  field: string;
  enters: string;
  reaches: string;
  /** Sends `text` in the field, in every spelling its way in allows, and checks what the rule does. */
  attempt: (text: string) => Promise<void>;
}

const postHeaderAgent = (who: () => Record<string, string>, body: () => unknown) => async (text: string) => {
  for (const [spelling, encoding] of headerSpellings(text)) {
    const res = await send('POST', '/', { ...who(), 'user-agent': `mod/1.0 ${PAD}${text}/1.0` }, JSON.stringify(body()), encoding);
    expect(String(res.json['message']), spelling).toContain('at character 209');
    await expectRefused(res, 400, 'invalid_user_agent');
  }
};
const envelopeMember = (member: string, value: (text: string) => string, code: string) => async (text: string) => {
  for (const [, body] of jsonSpellings(envelope({ [member]: value(text) }))) {
    await expectRefused(answerOf(await relay.post(body, relay.headers(null, bridge, CH))), 400, code, `/${member}`);
  }
};
const channelHeader = async (text: string) => {
  for (const [, encoding] of headerSpellings(text)) {
    await expectRefused(await send('POST', '/', { ...relay.headers(sender, key, null), 'x-irc-multiplayer-server': `play${text}.net` }, JSON.stringify(chat('x')), encoding), 400, 'invalid_channel');
  }
};

/** The ban record an operator reads for a cracked client that sent `text` in its client id and User-Agent. */
async function crackedClient(text: string): Promise<void> {
  for (const [spelling, encoding] of headerSpellings(text)) {
    const cracked = relay.player();
    const headers = { ...relay.headers(cracked, null, CH), 'client-id': `relay_${text}x`, 'client-secret': 'wrong', 'user-agent': `mod/1.0${text}/1.0` };
    await expectRefused(await send('POST', '/', headers, JSON.stringify(chat('x')), encoding), 403, 'banned');
    const record = ((await admin.call('/api/bans')).body as BanRecord[]).find((b) => b.uuid === cracked.uuid);
    expect(record, spelling).toMatchObject({ clientId: `relay_${shown(text)}x`, userAgent: `mod/1.0${shown(text)}/1.0` });
  }
}

const FIELDS: Field[] = [
  { field: 'User-Agent of a player', enters: 'header of POST / and /irc', reaches: 'meta.agent and meta.userAgent of every stream on the channel', attempt: postHeaderAgent(() => relay.headers(sender, key, CH), () => chat('x')) },
  { field: 'User-Agent of a bridge', enters: 'header of a POST without a session', reaches: 'the same, for each envelope', attempt: postHeaderAgent(() => relay.headers(null, bridge, CH), () => envelope({})) },
  {
    field: 'User-Agent of a stream',
    enters: 'header of GET / and /irc',
    reaches: 'the claim in relay-streams: the console, relay streams --json',
    attempt: async (text) => {
      for (const [, encoding] of headerSpellings(text)) {
        await expectRefused(await send('GET', '/', { ...relay.headers(sender, key, CH), 'user-agent': `mod/1.0${text}/1.0` }, null, encoding), 400, 'invalid_user_agent');
        expect(await relay.server.core.nats.buckets.streams.get(claimKey(sender.uuid, CH))).toBeNull();
      }
    },
  },
  { field: 'envelope agent', enters: 'POST body', reaches: 'meta.agent of every stream on its channel', attempt: envelopeMember('agent', (t) => `${PAD}${t}`, 'invalid_payload') },
  { field: 'envelope userAgent (legacy)', enters: 'POST body', reaches: 'the same, when agent is absent', attempt: envelopeMember('userAgent', (t) => `${PAD}${t}`, 'invalid_payload') },
  { field: 'envelope host', enters: 'POST body', reaches: 'meta.channel', attempt: envelopeMember('host', (t) => `play${t}.net`, 'invalid_channel') },
  { field: 'envelope channel (legacy)', enters: 'POST body', reaches: 'meta.channel, when host is absent', attempt: envelopeMember('channel', (t) => `play${t}.net`, 'invalid_channel') },
  { field: 'envelope user', enters: 'POST body', reaches: 'meta.uuid', attempt: envelopeMember('user', (t) => `${sender.uuid}${t}`, 'invalid_payload') },
  { field: 'X-IRC-Multiplayer-Server', enters: 'header of GET and POST', reaches: 'meta.channel, the stream\'s greeting', attempt: channelHeader },
  {
    field: 'query host',
    enters: 'query of GET and POST',
    reaches: 'meta.channel, the stream\'s greeting',
    attempt: async (text) => {
      const escaped = [...Buffer.from(`play${text}.net`, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
      await expectRefused(await send('POST', `/?host=${escaped}`, relay.headers(sender, key, null), JSON.stringify(chat('x'))), 400, 'invalid_channel');
    },
  },
  { field: 'client id and User-Agent of a cracked client', enters: 'headers of a request banned by rule A3', reaches: 'its ban record: relay bans list, the console, the admin API', attempt: crackedClient },
  {
    field: 'key label',
    enters: 'relay keys create --label, POST /api/keys',
    reaches: 'relay keys list, the console, the audit trail',
    attempt: async (text) => {
      const before = (await admin.call('/api/keys')).body;
      // A label is at most 200 characters: this one is refused for what it holds, not its length.
      for (const [, body] of jsonSpellings({ scopes: [Scope.Receive], label: `${PAD.slice(100)}${text}` })) {
        const res = await admin.call('/api/keys', { method: 'POST', body });
        expect([res.status, (res.body as Record<string, unknown>)['message']]).toEqual([400, expect.stringContaining('/label')]);
      }
      expect((await admin.call('/api/keys')).body).toEqual(before);
    },
  },
  {
    field: 'ban reason',
    enters: 'relay bans add --reason, POST /api/bans',
    reaches: 'relay bans list, the console, the audit trail',
    attempt: async (text) => {
      for (const [, body] of jsonSpellings({ uuid: sender.uuid, reason: `${PAD}${text}` })) {
        const res = await admin.call('/api/bans', { method: 'POST', body });
        expect([res.status, (res.body as Record<string, unknown>)['message']]).toEqual([400, expect.stringContaining('/reason')]);
      }
      expect(relay.server.core.bans.activeBan(sender.uuid)).toBeUndefined();
    },
  },
  {
    field: 'the operator\'s name',
    enters: 'RELAY_ACTOR of the CLI',
    reaches: 'the audit trail and the bans list (by)',
    attempt: async (text) => {
      const actor = currentActor({ RELAY_ACTOR: `ops ${text} team` });
      expect(actor).not.toMatch(RAW);
      expect(actor).toBe(`ops ${shown(text)} team`);
    },
  },
];

describe('every client- or operator-controlled text that reaches someone else', () => {
  // Guards issue 26: C1 controls in a User-Agent and bidi overrides in an envelope agent reached every stream raw.
  it.each(FIELDS)('$field ($enters, read in $reaches) never carries a refused character', async ({ attempt }) => {
    for (const [what, text] of REFUSED) {
      await expect(attempt(text), what).resolves.toBeUndefined();
    }
  });

  // Guards the profile API: its name is no player's to choose, and cannot be refused to anyone.
  it.each(REFUSED)('a profile name holding %s is not carried in authoritativeSender (null)', async (_what, text) => {
    const token = `tok${Math.random().toString(36).slice(2)}`;
    const uuid = relay.profile.addSession(token, `Notch${text}`);
    expect((await relay.post(chat('named'), { ...relay.headers(null, key, CH), authorization: `Bearer ${token}` })).status).toBe(200);
    const pair = (await listener.pairsUntil((p) => p.meta.uuid === uuid)).at(-1)!;
    expect(pair.meta).toMatchObject({ authoritativeSender: { id: uuid, username: null } });
  });

  // Guards the operators' logs: pino escapes C0 only, and a refused request's headers are logged.
  it.each(['POST', 'GET'] as const)('headers of a refused %s reach the log with refused characters as visible escapes', async (method) => {
    const marker = `note-${Math.random()}`;
    const headers = { ...relay.headers(sender, key, CH), 'x-note': `${marker}\u0085\u009b2J`, 'user-agent': 'mod/1.0\u009b' };
    expect((await send(method, '/', headers, method === 'POST' ? JSON.stringify(chat('x')) : null, 'latin1')).status).toBe(400);
    const line = relay.logs.lines.find((l) => l.includes(marker));
    expect(line).toBeDefined();
    const logged = JSON.parse(line!) as { headers: Record<string, string> };
    expect(logged.headers).toMatchObject({ 'x-note': `${marker}\\x85\\x9b2J`, 'user-agent': 'mod/1.0\\x9b' });
    expect(line).not.toMatch(RAW);
  });
});

describe('text the rule allows', () => {
  // Right-to-left and left-to-right marks, a zero-width joiner in an emoji, a noncharacter, three scripts.
  const ALLOWED = 'Мод \u200fמוד\u200e 👩\u200d💻 Café \ufdd0';
  const heard = async (tag: string) => (await listener.pairsUntil((p) => p.data['message'] === tag)).at(-1)!.meta;

  // Guards the other way: the rule refuses what reorders or controls a display, not people's names and emoji.
  it('an agent or label in any script, with bidi marks, joiners and emoji, reaches others as written in every spelling', async () => {
    for (const [spelling, encoding] of headerSpellings(ALLOWED)) {
      const tag = `header ${spelling}`;
      expect((await send('POST', '/', { ...relay.headers(sender, key, CH), 'user-agent': ALLOWED }, JSON.stringify(chat(tag)), encoding)).status).toBe(200);
      expect(await heard(tag)).toMatchObject({ agent: ALLOWED, userAgent: ALLOWED });
    }
    // A Latin-1 client (fetch sends "é" as one byte) and a UTF-8 one say the same.
    for (const encoding of ['latin1', 'utf8'] as const) {
      expect((await send('POST', '/', { ...relay.headers(sender, key, CH), 'user-agent': 'Café/1.0' }, JSON.stringify(chat(encoding)), encoding)).status).toBe(200);
      expect((await heard(encoding)).agent).toBe('Café/1.0');
    }
    for (const [spelling, body] of jsonSpellings([{ user: sender.uuid, agent: ALLOWED, message: chat(`json ${ALLOWED}`) }])) {
      expect((await relay.post(body, relay.headers(null, bridge, CH))).status, spelling).toBe(200);
      expect((await heard(`json ${ALLOWED}`)).agent).toBe(ALLOWED);
    }
    const player = relay.player();
    await relay.connect(relay.headers(player, key, CH, { 'user-agent': ALLOWED }));
    expect((await relay.server.core.nats.buckets.streams.get(claimKey(player.uuid, CH)))?.json()).toMatchObject({ agent: ALLOWED });
    // The admin API's validator reads the pattern per code point too: an emoji is no lone surrogate.
    const labelled = await admin.call('/api/keys', { method: 'POST', body: { scopes: [Scope.Receive], label: ALLOWED } });
    expect([labelled.status, (labelled.body as Record<string, unknown>)['label']]).toEqual([201, ALLOWED]);
  });

  // Guards the cut of a long User-Agent: by code point, never leaving half an emoji (a lone surrogate).
  it('a User-Agent past 256 characters is cut to 256 code points; an envelope agent past 256 is refused', async () => {
    const long = `${'a'.repeat(255)}👩‍💻${'b'.repeat(100)}`;
    expect((await send('POST', '/', { ...relay.headers(sender, key, CH), 'user-agent': long }, JSON.stringify(chat('long')), 'utf8')).status).toBe(200);
    expect((await heard('long')).agent).toBe(`${'a'.repeat(255)}👩`);
    const refused = answerOf(await relay.post(envelope({ agent: 'a'.repeat(257) }), relay.headers(null, bridge, CH)));
    await expectRefused(refused, 400, 'invalid_payload', '/agent');
  });
});
