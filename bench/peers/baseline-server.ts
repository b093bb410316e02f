// The baseline peer: a minimal node:http SSE broadcaster with the relay's frame format and no auth,
// no NATS. One res.write per stream per message: the ceiling for a plain Node implementation.
import { createServer, type ServerResponse } from 'node:http';

const channels = new Map<string, Set<ServerResponse>>();
let seq = 0;
const port = Number(process.env['PORT'] ?? 0);

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  const channel = url.searchParams.get('host') ?? 'default';
  if (req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    res.write(': ok\n\n');
    let set = channels.get(channel);
    if (set === undefined) channels.set(channel, (set = new Set()));
    set.add(res);
    res.on('close', () => set.delete(res));
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const meta = JSON.stringify({ uuid: '00000000-0000-0000-0000-000000000001', agent: 'bench/1.0', channel });
    const frame = Buffer.from(`event: meta\ndata: ${meta}\n\nid: ${++seq}\ndata: ${body}\n\n`);
    for (const s of channels.get(channel) ?? []) s.write(frame);
    const reply = '{"accepted":1}';
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': reply.length }).end(reply);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1', () => {
  const address = server.address() as { port: number };
  process.stdout.write(`listening ${address.port}\n`);
});
