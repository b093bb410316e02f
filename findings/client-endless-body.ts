// Probe: on the client port, a request refused before its body is read (404 path, 415
// Content-Encoding, 401 stream without a session) whose declared body never finishes. BODY_TIMEOUT
// (here 1 s) is meant to bound "the headers and the body"; after the refusal Node keeps reading
// (dumping) the rest of the body, the body deadline was cleared by the answer's close, the
// client port has no requestTimeout, and the 65 s keep-alive timer is dropped by the next byte.
//
//   npx tsx findings/client-endless-body.ts          (about 80 s)
//
// Exit 1 (reproduced) when a stranger's connection is still open at the end, far past BODY_TIMEOUT.

import { raw, sleep, startStack, type Raw } from './lib/stack.js';

const HOLD_SECONDS = Number(process.env['HOLD_SECONDS'] ?? 75);

async function main(): Promise<number> {
  const stack = await startStack({ relay: { BODY_TIMEOUT: '1s' } });
  const relay = stack.relay!;
  const port = Number(new URL(relay.url).port);
  const host = `127.0.0.1:${port}`;
  const cases: Record<string, string> = {
    'POST /nope (404), content-length 1e9': `POST /nope HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n{"a":`,
    'POST / gzip (415), content-length 1e9': `POST / HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: 1000000000\r\n\r\n{"a":`,
    'POST / text/plain (415), chunked': `POST / HTTP/1.1\r\nHost: ${host}\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n`,
    'GET / no session (401), chunked': `GET / HTTP/1.1\r\nHost: ${host}\r\nAccept: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n`,
    'POST / ok path, no auth, content-length 1e9 (control: body deadline)': `POST / HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n{"a":`,
  };
  const held: Array<[string, Raw]> = [];
  try {
    for (const [name, first] of Object.entries(cases)) held.push([name, await raw(port, first)]);
    await sleep(3000);
    // One more body byte each, a single time: it drops the keep-alive timer set after the answer.
    for (const [name, h] of held) {
      if (h.isClosed()) continue;
      h.socket.write(name.includes('chunked') ? '1\r\ny\r\n' : 'x');
    }
    const started = performance.now();
    while (performance.now() - started < HOLD_SECONDS * 1000) {
      await sleep(5000);
      const open = held.filter(([, h]) => !h.isClosed()).map(([n]) => n);
      console.log(`t=${Math.round((performance.now() - started) / 1000) + 3}s open: ${open.length}/${held.length}`);
    }
    let reproduced = false;
    for (const [name, h] of held) {
      const status = h.text().split('\r\n')[0] ?? '';
      console.log(`${name}: answered "${status}", ${h.isClosed() ? 'closed' : `STILL OPEN after ${HOLD_SECONDS + 3}s with one byte sent after the answer`}`);
      if (!h.isClosed()) reproduced = true;
    }
    console.log(reproduced ? 'REPRODUCED: a stranger holds client-port connections past BODY_TIMEOUT and the keep-alive timeout' : 'not reproduced');
    return reproduced ? 1 : 0;
  } finally {
    for (const [, h] of held) h.socket.destroy();
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
