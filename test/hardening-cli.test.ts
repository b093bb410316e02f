// Issue 9, the operator's side: what careless environments, hostile clients and mistyped arguments
// can make the `relay` CLI and `npm start` do. Each test runs the real CLI against a real nats-server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { RelayFixture } from './helpers/relay.js';

let relay: RelayFixture;
let natsHostPort: string;

beforeAll(async () => {
  relay = await RelayFixture.start();
  natsHostPort = relay.nats.url.replace(/^nats:\/\//, '');
});
afterAll(async () => {
  await relay?.close();
});

describe('credentials inside NATS_URL', () => {
  // Guards: a password in NATS_URL never reaches a terminal, a CI log or a ticket through the CLI.
  it('are shown as ***@ by config check, its problems, the unreachable message and the connection log', async () => {
    const secretUrl = `nats://alice:s3cret@${natsHostPort}`;
    const leaked = /alice|s3cret/;

    const table = await runCli(['config', 'check', 'all'], { NATS_URL: secretUrl, PROFILE_API_URL: 'https://bob:hunter2@profiles.example/v1' });
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(new RegExp(`NATS_URL\\s+nats://\\*\\*\\*@${natsHostPort.replace(/\./g, '\\.')}\\s`));
    expect(table.stdout).toContain('https://***@profiles.example/v1');
    expect(table.stdout).not.toMatch(/alice|s3cret|bob|hunter2/);

    const json = await runCli(['config', 'check', 'gateway', '--json'], { NATS_URL: `${secretUrl},tls://tok3n@nats-2.example:4222` });
    expect(json.code).toBe(0);
    const rows = JSON.parse(json.stdout) as Array<{ name: string; value: string }>;
    expect(rows.find((r) => r.name === 'NATS_URL')?.value).toBe(`nats://***@${natsHostPort},tls://***@nats-2.example:4222`);
    expect(json.stdout).not.toMatch(/alice|s3cret|tok3n/);

    const invalid = await runCli(['config', 'check', 'all'], { NATS_URL: 'nats://alice:s3cret@nats.example:4222/path' });
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('NATS_URL has "nats://***@nats.example:4222/path"');
    expect(invalid.stderr).not.toMatch(leaked);

    const unreachable = await runCli(['keys', 'list'], { NATS_URL: 'nats://alice:s3cret@127.0.0.1:1' });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/^relay: Cannot reach NATS at nats:\/\/\*\*\*@127\.0\.0\.1:1 /);
    expect(unreachable.stderr).not.toMatch(leaked);

    const logged = await runCli(['keys', 'list', '--json'], { NATS_URL: secretUrl, LOG_LEVEL: 'info' });
    expect(logged.code).toBe(0);
    expect(logged.stderr).toContain('connected to NATS');
    expect(logged.stderr).not.toMatch(leaked);
  });
});
