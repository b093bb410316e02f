// A battery of raw requests against the admin port and the client port, without any token or key:
// odd paths, methods, Host values, parser errors, pipelining. Prints one line per probe (status,
// body) and flags what breaks the documented contract: a 2xx on an admin route that needs a token,
// a 5xx, a refusal whose body is not {"error","message"}, a connection neither answered nor closed.
//
//   npx tsx findings/probes.ts
//
// Exit 1 when anything is flagged.

import { raw, sleep, startStack } from './lib/stack.js';

interface Probe {
  name: string;
  text: string;
  /** Statuses that are fine for this probe; anything else is flagged. */
  ok?: (status: number) => boolean;
}

const refusal = (s: number): boolean => s >= 400 && s < 500;

async function send(port: number, text: string, waitMs = 1500): Promise<{ answer: string; closed: boolean }> {
  const r = await raw(port, text);
  await Promise.race([r.closed, sleep(waitMs)]);
  const closed = r.isClosed();
  r.socket.destroy();
  return { answer: r.text(), closed };
}

function judge(answer: string, ok: (s: number) => boolean): string[] {
  const problems: string[] = [];
  const responses = answer.split(/(?=HTTP\/1\.[01] \d{3} )/).filter((p) => p.startsWith('HTTP/'));
  if (responses.length === 0) return ['no answer'];
  for (const r of responses) {
    const status = Number(r.split(' ')[1]);
    if (!ok(status)) problems.push(`status ${status}`);
    if (status >= 500) problems.push('5xx');
    if (status >= 400) {
      const body = r.split('\r\n\r\n')[1] ?? '';
      try {
        const json = JSON.parse(body.replace(/^[0-9a-f]+\r\n/, '').replace(/\r\n0\r\n\r\n$/, '')) as Record<string, unknown>;
        if (typeof json['error'] !== 'string' || typeof json['message'] !== 'string') problems.push(`body not {error,message}: ${body.slice(0, 80)}`);
      } catch {
        if (!r.startsWith('HTTP/1.1 4') || body !== '') problems.push(`body not JSON: ${JSON.stringify(body.slice(0, 80))}`);
        else problems.push('empty refusal body');
      }
    }
  }
  if (responses.length > 1) problems.push(`${responses.length} status lines on one connection`);
  return problems;
}

async function main(): Promise<number> {
  const stack = await startStack({ admin: {}, relay: {} });
  const adminPort = stack.admin!.server.port;
  const clientPort = Number(new URL(stack.relay!.url).port);
  let flagged = 0;
  const run = async (label: string, port: number, probes: Probe[]): Promise<void> => {
    for (const p of probes) {
      const { answer, closed } = await send(port, p.text);
      const problems = judge(answer, p.ok ?? refusal);
      const first = answer.split('\r\n')[0] ?? '';
      const body = (answer.split('\r\n\r\n')[1] ?? '').slice(0, 110);
      if (problems.length > 0) flagged++;
      console.log(`${problems.length > 0 ? 'FLAG' : 'ok  '} [${label}] ${p.name}: ${first} ${body}${closed ? '' : ' (still open)'}${problems.length > 0 ? `  <- ${problems.join('; ')}` : ''}`);
    }
  };
  const H = 'Host: 127.0.0.1\r\n';
  const adminRoutes = stack.admin!.server.routes.map((r) => `${r.method} ${r.url} ${r.access ?? 'token'}`);
  console.log(`admin routes:\n  ${adminRoutes.join('\n  ')}`);
  const needToken = ['/api/keys', '/api/session', '/api/bans', '/api/audit', '/api/channels/x/tail', '/api/overview'];
  const spellings = (p: string): string[] => [
    p,
    `/${p}`,
    p.replace('/api/', '/api//'),
    `${p}/`,
    p.replace('/api/', '/%61pi/'),
    p.replace('/api/', '/api%2f'),
    p.replace('/api/', '/API/'),
    p.replace('/api/', '/api/./'),
    p.replace('/api/', '/x/../api/'),
    `${p};x`,
    `${p}%00`,
    `${p}?a=1#x`,
    `${p}.`,
    p.replace('/api/', '/api%2F'),
    p.replace('/api/', '/ap%69/'),
  ];
  const adminProbes: Probe[] = [];
  for (const p of needToken) {
    for (const s of spellings(p)) {
      for (const m of ['GET', 'HEAD', 'POST', 'DELETE', 'OPTIONS', 'PUT', 'PATCH', 'TRACE', 'PROPFIND', 'get']) {
        adminProbes.push({ name: `${m} ${s}`, text: `${m} ${s} HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}` });
      }
    }
  }
  const token = stack.admin!.tokens['alice']!;
  adminProbes.push(
    { name: 'absolute form', text: `GET http://127.0.0.1/api/keys HTTP/1.1\r\n${H}Authorization: Bearer ${token}\r\nConnection: close\r\n\r\n` },
    { name: 'OPTIONS *', text: `OPTIONS * HTTP/1.1\r\n${H}Connection: close\r\n\r\n` },
    { name: 'HTTP/1.0 no Host, token', text: `GET /api/keys HTTP/1.0\r\nAuthorization: Bearer ${token}\r\n\r\n` },
    { name: 'Host localhost.', text: `GET /api/keys HTTP/1.1\r\nHost: localhost.\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n` },
    { name: 'Host 127.1', text: `GET /api/keys HTTP/1.1\r\nHost: 127.1\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n` },
    { name: 'Host evil.com with second Host 127.0.0.1', text: `GET /api/keys HTTP/1.1\r\nHost: evil.com\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n` },
    { name: 'two Authorization (junk first)', text: `GET /api/keys HTTP/1.1\r\n${H}Authorization: Bearer junk\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n` },
    { name: 'Authorization: Basic token', text: `GET /api/keys HTTP/1.1\r\n${H}Authorization: Basic ${token}\r\nConnection: close\r\n\r\n` },
    { name: 'token as query', text: `GET /api/keys?token=${token} HTTP/1.1\r\n${H}Connection: close\r\n\r\n` },
    { name: 'POST keys Origin null, token', text: `POST /api/keys HTTP/1.1\r\n${H}Origin: null\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}` },
    { name: 'POST keys utf-7 json, token', text: `POST /api/keys HTTP/1.1\r\n${H}Authorization: Bearer ${token}\r\nContent-Type: application/json; charset=utf-7\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}` },
    { name: 'POST bans deep JSON, token', text: (() => { const b = '['.repeat(30000) + ']'.repeat(30000); return `POST /api/bans HTTP/1.1\r\n${H}Authorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${b.length}\r\nConnection: close\r\n\r\n${b}`; })() },
    { name: 'POST bans bad JSON reflected, token', text: `POST /api/bans HTTP/1.1\r\n${H}Authorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 25\r\nConnection: close\r\n\r\n<script>alert(1)</script>` },
    { name: 'POST /nope bad JSON, no token', text: `POST /nope HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 5\r\nConnection: close\r\n\r\n{nope` },
    { name: 'static traversal %2e%2e', text: `GET /%2e%2e/%2e%2e/package.json HTTP/1.1\r\n${H}Connection: close\r\n\r\n` },
    { name: 'static traversal ..%2f', text: `GET /..%2f..%2fpackage.json HTTP/1.1\r\n${H}Connection: close\r\n\r\n` },
    { name: 'static index.html.gz', text: `GET /index.html.gz HTTP/1.1\r\n${H}Connection: close\r\n\r\n`, ok: (s) => s === 200 || refusal(s) },
    { name: 'static .vite or dotfile', text: `GET /.env HTTP/1.1\r\n${H}Connection: close\r\n\r\n` },
    { name: 'control char in header', text: `GET /api/keys HTTP/1.1\r\n${H}X-A: a\x01b\r\n\r\n` },
    { name: 'bad request line', text: `GET /api/keys HTTP/9.9\r\n${H}\r\n` },
    { name: '17 KiB header', text: `GET /api/keys HTTP/1.1\r\n${H}X-A: ${'a'.repeat(17 * 1024)}\r\n\r\n` },
    { name: 'pipelined /readyz then malformed', text: `GET /readyz HTTP/1.1\r\n${H}\r\nGET /\x01 HTTP/1.1\r\n\r\n`, ok: (s) => s === 200 || refusal(s) },
    { name: 'CL and TE together', text: `POST /api/keys HTTP/1.1\r\n${H}Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n` },
  );
  await run('admin', adminPort, adminProbes);

  const clientProbes: Probe[] = [
    { name: 'control char in header', text: `GET / HTTP/1.1\r\n${H}X-A: a\x01b\r\n\r\n` },
    { name: 'NUL in request line', text: `GET /\x00 HTTP/1.1\r\n${H}\r\n` },
    { name: 'bad version', text: `GET / HTTP/9.9\r\n${H}\r\n` },
    { name: 'lowercase method', text: `get / HTTP/1.1\r\n${H}\r\n` },
    { name: '17 KiB header', text: `GET / HTTP/1.1\r\n${H}X-A: ${'a'.repeat(17 * 1024)}\r\n\r\n` },
    { name: 'CL and TE together', text: `POST / HTTP/1.1\r\n${H}Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n` },
    { name: 'two Content-Length', text: `POST / HTTP/1.1\r\n${H}Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}` },
    { name: 'bad chunk size', text: `POST / HTTP/1.1\r\n${H}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n` },
    { name: 'absolute form POST', text: `POST http://evil/ HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}` },
    { name: 'absolute form GET stream', text: `GET http://evil/ HTTP/1.1\r\n${H}Accept: text/event-stream\r\nConnection: close\r\n\r\n` },
    { name: 'OPTIONS *', text: `OPTIONS * HTTP/1.1\r\n${H}Connection: close\r\n\r\n` },
    { name: 'CONNECT', text: `CONNECT 127.0.0.1:22 HTTP/1.1\r\n${H}\r\n` },
    { name: 'Upgrade websocket on /', text: `GET / HTTP/1.1\r\n${H}Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n` },
    { name: 'Upgrade h2c on POST', text: `POST / HTTP/1.1\r\n${H}Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}` },
    { name: 'h2 preface', text: 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n' },
    { name: 'TLS hello bytes', text: '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03' },
    { name: 'POST /irc%3f', text: `POST /irc%3f HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}` },
    { name: 'GET //', text: `GET // HTTP/1.1\r\n${H}Accept: text/event-stream\r\nConnection: close\r\n\r\n` },
    { name: 'GET /%2e%2e/metrics', text: `GET /%2e%2e/metrics HTTP/1.1\r\n${H}Connection: close\r\n\r\n` },
    { name: 'GET /metrics%00', text: `GET /metrics%00 HTTP/1.1\r\n${H}Connection: close\r\n\r\n` },
    { name: 'GET /% broken escape', text: `GET /%zz HTTP/1.1\r\n${H}Connection: close\r\n\r\n` },
    { name: 'GET /?host=%ff', text: `GET /?host=%ff HTTP/1.1\r\n${H}Accept: text/event-stream\r\nConnection: close\r\n\r\n` },
    { name: 'GET /?host[]=a', text: `GET /?host[]=a&host=b HTTP/1.1\r\n${H}Accept: text/event-stream\r\nConnection: close\r\n\r\n` },
    { name: 'POST json with BOM', text: `POST / HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 5\r\nConnection: close\r\n\r\n\xef\xbb\xbf{}` },
    { name: 'POST content-type json with junk params', text: `POST / HTTP/1.1\r\n${H}Content-Type: application/json;;;=\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}` },
    { name: 'POST __proto__ body', text: `POST / HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 36\r\nConnection: close\r\n\r\n{"__proto__":{"x":1},"type":"chat"}` },
    { name: 'pipelined /readyz then malformed', text: `GET /readyz HTTP/1.1\r\n${H}\r\nGET /\x01 HTTP/1.1\r\n\r\n`, ok: (s) => s === 200 || refusal(s) },
    { name: 'expect 100-continue unknown', text: `POST / HTTP/1.1\r\n${H}Expect: 200-ok\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}` },
  ];
  await run('client', clientPort, clientProbes);
  await stack.stop();
  console.log(`${flagged} flagged`);
  return flagged > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e);
    process.exit(2);
  },
);
