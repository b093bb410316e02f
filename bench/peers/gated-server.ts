// A bare node:http server, with the connection gate in front (GATED=1) or without: what the gate
// costs a connection, measured by bench/connection-gate.ts. Answers every request "ok"; holds a
// GET /hold open (a stream's connection) until its client leaves; GET /gate-cost answers how long the
// connection listeners ahead of Node's own took (the gate's, or none), median and p90 in µs, and
// starts counting again.
import { createServer } from 'node:http';
import { compileTrustedProxies } from '../../services/core/client-address.js';
import { gateConnections } from '../../services/core/connection-gate.js';
import { createLogger } from '../../services/core/logger.js';

let took: number[] = [];
let started = 0;
const quantile = (sorted: number[], q: number): number => (sorted[Math.floor(q * (sorted.length - 1))] ?? 0) * 1000;

const server = createServer((req, res) => {
  if (req.url === '/hold') return void res.writeHead(200, { 'content-type': 'text/event-stream' }).write(': ok\n\n');
  if (req.url === '/gate-cost') {
    const sorted = took.sort((a, b) => a - b);
    took = [];
    return void res.end(JSON.stringify({ median: quantile(sorted, 0.5), p90: quantile(sorted, 0.9) }));
  }
  res.writeHead(200, { 'content-length': 2 }).end('ok');
});
server.keepAliveTimeout = 65_000;
// In order: the clock starts, the gate (when there is one), the clock stops, then Node's listener.
server.prependListener('connection', () => void took.push(performance.now() - started));
if (process.env['GATED'] === '1') {
  gateConnections(server, {
    perAddress: 1000,
    ipv6Prefix: 56,
    exempt: compileTrustedProxies([]),
    setting: 'MAX_CONNECTIONS_PER_ADDRESS',
    logger: createLogger({ level: 'warn', pretty: false }),
    refused: () => undefined,
  });
}
server.prependListener('connection', () => void (started = performance.now()));
server.listen(Number(process.env['PORT'] ?? 0), '127.0.0.1', 4096, () => console.log('listening'));
