// The origin Pushpin proxies stream requests to: it answers every GET with GRIP instructions to hold
// the connection as a stream on the channel named by ?host=.
import { createServer } from 'node:http';

const port = Number(process.env['PORT'] ?? 0);
createServer((req, res) => {
  const channel = new URL(req.url ?? '/', 'http://x').searchParams.get('host') ?? 'default';
  res.writeHead(200, { 'content-type': 'text/event-stream', 'grip-hold': 'stream', 'grip-channel': channel });
  res.end(': ok\n\n');
}).listen(port, '127.0.0.1', () => process.stdout.write(`listening ${port}\n`));
