// Probe: do `relay setup` and `relay config check` ever print a secret, or a raw control character,
// with careless or hostile environments? A nats-server with a password user; the CLI run as a child
// process the way an operator runs it, at LOG_LEVEL warn, debug and trace; every output searched for
// the secrets (and any part of them of 4+ characters) and for raw C0/C1/bidi characters.
//
//   npx tsx findings/cli-secrets.ts
//
// Exit 1 when any output shows a secret (or a fragment) or a raw control character.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNatsNode } from '../tools/nats-launcher.js';
import { runCli } from '../test/helpers/cli.js';

const PASSWORD = 'Pw9Zq7Kx2Lm4Vb8N';
const TOKEN = 'Tk5Rr3Yy8Uu1Ii0O';
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

function leaks(text: string): string[] {
  const found: string[] = [];
  for (const secret of [PASSWORD, TOKEN, 'hunter2x', 'c0mma']) {
    for (let i = 0; i + 4 <= secret.length; i++) {
      const part = secret.slice(i, i + 4);
      if (text.includes(part)) {
        found.push(`${secret} (fragment "${part}")`);
        break;
      }
    }
  }
  if (RAW_CONTROL.test(text)) found.push(`raw control character ${JSON.stringify(RAW_CONTROL.exec(text)?.[0])}`);
  return found;
}

async function main(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'relay-findings-nats-'));
  const node = await startNatsNode({ storeDir: dir, extraConfig: `authorization { users = [ { user: cli, password: "${PASSWORD}" } ] }` });
  const hostPort = `127.0.0.1:${node.port}`;
  let flagged = 0;
  try {
    const cases: Array<[string, string[], Record<string, string>]> = [
      ['setup, right credentials', ['setup'], { NATS_URL: node.url, NATS_USER: 'cli', NATS_PASSWORD: PASSWORD }],
      ['setup --json, right credentials, debug', ['setup', '--json'], { NATS_URL: node.url, NATS_USER: 'cli', NATS_PASSWORD: PASSWORD, LOG_LEVEL: 'debug' }],
      ['setup, wrong password, trace', ['setup'], { NATS_URL: node.url, NATS_USER: 'cli', NATS_PASSWORD: `${PASSWORD}x`, LOG_LEVEL: 'trace' }],
      ['setup, token (refused), debug', ['setup'], { NATS_URL: node.url, NATS_TOKEN: TOKEN, LOG_LEVEL: 'debug' }],
      ['setup, password in URL, unreachable', ['setup'], { NATS_URL: `nats://cli:${PASSWORD}@127.0.0.1:1` }],
      ['setup, password in URL, reachable', ['setup'], { NATS_URL: `nats://cli:${PASSWORD}@${hostPort}`, LOG_LEVEL: 'debug' }],
      ['setup, password with a comma in URL', ['setup'], { NATS_URL: `nats://cli:c0mma,hunter2x@${hostPort}` }],
      ['config check, password with a comma in URL', ['config', 'check', 'all', '--offline'], { NATS_URL: `nats://cli:c0mma,hunter2x@${hostPort}` }],
      ['setup, URL port 99999 with password', ['setup'], { NATS_URL: `nats://cli:${PASSWORD}@127.0.0.1:99999`, LOG_LEVEL: 'debug' }],
      ['setup, URL with bad escape in password', ['setup'], { NATS_URL: `nats://cli:${PASSWORD}%zz@${hostPort}`, LOG_LEVEL: 'debug' }],
      ['setup, URL host with ESC', ['setup'], { NATS_URL: `nats://h\x1b[2Jx:4222` }],
      ['config check, URL host with ESC', ['config', 'check', 'all', '--offline'], { NATS_URL: `nats://h\x1b[2Jx:4222` }],
      ['config check, NATS_USER with ESC', ['config', 'check', 'all', '--offline'], { NATS_URL: node.url, NATS_USER: 'cli\x1b[2J\u202e' }],
      ['setup, NATS_USER with ESC', ['setup'], { NATS_URL: node.url, NATS_USER: 'cli\x1b[2J', NATS_PASSWORD: PASSWORD }],
      ['config check, ADMIN_TOKENS malformed', ['config', 'check', 'admin', '--offline'], { NATS_URL: node.url, ADMIN_TOKENS: `${TOKEN}${TOKEN}, ana ${PASSWORD}${PASSWORD}` }],
      ['config check, ADMIN_TOKEN short', ['config', 'check', 'admin', '--offline'], { NATS_URL: node.url, ADMIN_TOKEN: TOKEN }],
      ['config check, OTEL headers', ['config', 'check', 'all', '--offline'], { NATS_URL: node.url, OTEL_EXPORTER_OTLP_HEADERS: `api-key=${TOKEN}` }],
      ['config check, OTEL headers malformed', ['config', 'check', 'all', '--offline'], { NATS_URL: node.url, OTEL_EXPORTER_OTLP_HEADERS: `api key=${TOKEN}` }],
      ['config check, OTEL endpoint with user info', ['config', 'check', 'all', '--offline'], { NATS_URL: node.url, OTEL_EXPORTER_OTLP_ENDPOINT: `https://u:${PASSWORD}@otel.example/` }],
      ['config check, OTEL endpoint malformed with user info', ['config', 'check', 'all', '--offline'], { NATS_URL: node.url, OTEL_EXPORTER_OTLP_ENDPOINT: `ftp://u:${PASSWORD}@otel.example/` }],
      ['config check, PROFILE_API_URL key in query', ['config', 'check', 'all', '--offline'], { NATS_URL: node.url, PROFILE_API_URL: `https://p.example/x?apikey=${TOKEN}&k=${PASSWORD}` }],
      ['config check, NATS_PASSWORD with ESC and wrong', ['config', 'check', 'all'], { NATS_URL: node.url, NATS_USER: 'cli', NATS_PASSWORD: `${PASSWORD}\x1b` }],
      ['config check, creds file that is the password', ['config', 'check', 'all', '--offline'], { NATS_URL: node.url, NATS_CREDS_FILE: `/nonexistent/${PASSWORD}` }],
      ['config check, TLS key path', ['config', 'check', 'all', '--offline'], { NATS_URL: node.url, NATS_TLS_KEY: `/nonexistent/${TOKEN}.key` }],
      ['config check, NATS_NKEY_SEED malformed', ['config', 'check', 'all', '--offline'], { NATS_URL: node.url, NATS_NKEY_SEED: `SU${TOKEN}` }],
      ['setup, NATS_NKEY_SEED malformed', ['setup'], { NATS_URL: node.url, NATS_NKEY_SEED: `SU${TOKEN}`, LOG_LEVEL: 'debug' }],
    ];
    for (const [name, args, env] of cases) {
      const r = await runCli(args, env, 60_000).catch((e: unknown) => ({ code: -1, stdout: '', stderr: String(e) }));
      const out = `${r.stdout}\n${r.stderr}`;
      const found = leaks(out);
      if (found.length > 0) flagged++;
      const shown = out.replace(/\n+/g, ' | ').slice(0, 400);
      console.log(`${found.length > 0 ? 'FLAG' : 'ok  '} ${name} (exit ${r.code}): ${found.length > 0 ? `LEAKS ${found.join(', ')} :: ` : ''}${JSON.stringify(shown)}`);
    }
  } finally {
    await node.stop();
    rmSync(dir, { recursive: true, force: true });
  }
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
