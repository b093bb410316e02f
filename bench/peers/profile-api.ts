// A profile API for the benchmark: any "bench-<name>" token is a valid session of player <name>,
// so every stream can have its own account without registering tokens first.
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';

export async function startBenchProfileApi(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const token = (req.headers.authorization ?? '').replace(/^Bearer\s+/i, '');
    if (!token.startsWith('bench-')) return void res.writeHead(401).end();
    const name = token.slice(6).slice(0, 16);
    const id = createHash('md5').update(name).digest('hex');
    const body = JSON.stringify({ id, name });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length }).end(body);
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/minecraft/profile`,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
