// Finding: infra/compose.yaml gives the admin service TRUSTED_PROXIES=uniquelocal (through the shared
// x-relay-env anchor) although no proxy stands in front of it: the host reaches it through Docker's
// port forwarding ('127.0.0.1:8090:8090'), which hands every host client to the container from the
// bridge gateway (172.x.0.1, inside uniquelocal). Every such client is then a "trusted proxy": no
// per-address cap and no 2 s first-byte deadline. A local user opens ADMIN_MAX_CONNECTIONS silent
// sockets (not one byte sent), each lives until the 30 s idle deadline, and the operator is refused.
//
// Reproduced here with TRUSTED_PROXIES=loopback (the same code path: the peer is a trusted proxy)
// and ADMIN_MAX_CONNECTIONS=512 so it fits one process's descriptors; the default 8,192 only
// multiplies the sockets (about 270 new connections a second to keep it full).
//
//   npx tsx findings/admin-trusted-forwarder-lockout.ts
//
// Exit 1 (reproduced) when the operator could not sign in while the silent sockets were held.

import { askFresh, raw, sleep, startStack, type Raw } from './lib/stack.js';

const TOTAL = 512;

async function main(): Promise<number> {
  const stack = await startStack({
    admin: { TRUSTED_PROXIES: 'loopback', ADMIN_MAX_CONNECTIONS: String(TOTAL), ADMIN_MAX_CONNECTIONS_PER_ADDRESS: String(TOTAL / 4) },
  });
  const admin = stack.admin!;
  const port = admin.server.port;
  const token = admin.tokens['alice']!;
  const held: Raw[] = [];
  let stop = false;
  try {
    console.log(`before: operator GET /api/session -> ${await askFresh(port, '/api/session', { authorization: `Bearer ${token}` })}`);
    // Silent sockets from one address (127.0.0.9), re-opened as the service closes them.
    const opened = performance.now();
    const refill = async (): Promise<void> => {
      const open = held.filter((h) => !h.isClosed()).length;
      const missing = TOTAL - open;
      await Promise.all(Array.from({ length: missing }, () => raw(port, '', '127.0.0.9').then((h) => void held.push(h), () => undefined)));
    };
    await refill();
    const firstBatch = held.slice(0, TOTAL);
    const keeper = (async () => {
      while (!stop) {
        await sleep(1000);
        await refill();
      }
    })();
    await sleep(5000);
    const aliveAfter5s = firstBatch.filter((h) => !h.isClosed()).length;
    console.log(`silent sockets (0 bytes sent) still open 5 s later: ${aliveAfter5s}/${TOTAL} (an untrusted peer's are reset at 2 s)`);
    let attempts = 0;
    let signedIn = 0;
    for (let i = 0; i < 10; i++) {
      const status = await askFresh(port, '/api/session', { authorization: `Bearer ${token}` });
      attempts++;
      if (status.includes(' 200 ')) signedIn++;
      console.log(`operator GET /api/session -> ${status}`);
      await sleep(1500);
    }
    await Promise.race([Promise.all(firstBatch.map((h) => h.closed)), sleep(40_000)]);
    const lifetimes = firstBatch.filter((h) => h.isClosed()).length;
    console.log(`first batch closed by the service within ${((performance.now() - opened) / 1000).toFixed(0)} s: ${lifetimes}/${TOTAL}`);
    stop = true;
    await keeper;
    const reproduced = signedIn === 0 && aliveAfter5s === TOTAL;
    console.log(`operator signed in ${signedIn} of ${attempts} times`);
    console.log(reproduced ? 'REPRODUCED: silent sockets from a trusted peer held every connection; the operator was refused' : 'not reproduced');
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
