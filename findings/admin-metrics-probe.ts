// Probe: what the admin port's /metrics (access 'probe': no token, any Host, so a DNS-rebinding page
// can read it too) tells a stranger.
//
//   npx tsx findings/admin-metrics-probe.ts
//
// Exit 1 when it names the host (RELAY_NODE_ID defaults to <hostname>-<pid>) or the Node version.

import { hostname } from 'node:os';
import { raw, sleep, startStack } from './lib/stack.js';

async function main(): Promise<number> {
  const stack = await startStack({ admin: { RELAY_NODE_ID: '' } });
  try {
    const r = await raw(stack.admin!.server.port, 'GET /metrics HTTP/1.1\r\nHost: attacker.example\r\nConnection: close\r\n\r\n');
    await Promise.race([r.closed, sleep(3000)]);
    const text = r.text();
    console.log(text.split('\r\n')[0]);
    const node = /node="([^"]*)"/.exec(text)?.[1];
    const version = /nodejs_version_info\{[^}]*version="([^"]*)"/.exec(text)?.[1];
    console.log(`node label: ${node}; nodejs_version_info: ${version}; this host: ${hostname()}`);
    const leaks = (node ?? '').includes(hostname()) || version !== undefined;
    console.log(leaks ? 'REPRODUCED: a stranger (any Host) reads the host name and the Node version' : 'not reproduced');
    return leaks ? 1 : 0;
  } finally {
    await stack.stop();
  }
}

main().then((code) => process.exit(code), (e: unknown) => { console.error(e); process.exit(2); });
