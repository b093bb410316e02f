// Taking a stream's socket off Node's HTTP server (services/gateway/stream/bare-socket.ts), against
// a real node:http server and client: what is handed over, and that nothing changes when it cannot be.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { bareConnections, closeEveryConnection, takeOffHttp } from '../../services/gateway/stream/bare-socket.js';

let server: Server | null = null;
afterEach(async () => {
  if (server !== null) closeEveryConnection(server);
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = null;
});

interface Exchange {
  client: Socket;
  res: ServerResponse;
  socket: Socket;
  received: () => string;
}

/** One GET answered with an SSE head; resolves once the request is read whole. */
async function exchange(request = 'GET / HTTP/1.1\r\nHost: x\r\n\r\n'): Promise<Exchange> {
  const answered = new Promise<{ req: IncomingMessage; res: ServerResponse }>((resolve) => {
    server = createServer((req, res) => {
      res.useChunkedEncodingByDefault = false;
      res.writeHead(200, { 'content-type': 'text/event-stream', connection: 'close' });
      res.write('retry: 1000\n\n');
      resolve({ req, res });
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const client = connect((server!.address() as AddressInfo).port, '127.0.0.1');
  let text = '';
  client.on('data', (d: Buffer) => (text += d.toString('latin1')));
  client.on('error', () => undefined);
  client.write(request);
  const { req, res } = await answered;
  // The request's end is read after its head: what a gateway has by the time a claim is written.
  if (!req.complete) await new Promise((resolve) => req.once('end', resolve).resume());
  return { client, res, socket: res.socket!, received: () => text };
}

const serverListeners = (s: Socket): number => ['data', 'end', 'close', 'drain', 'error', 'timeout', 'resume', 'pause'].reduce((n, e) => n + s.listenerCount(e), 0);

describe('taking a stream socket off the HTTP server', () => {
  it('hands the socket over: the response lets it go, writes reach the client, and closing every connection still ends it', async () => {
    const { client, res, socket, received } = await exchange();
    expect(takeOffHttp(res, socket)).toBe('bare');
    expect(res.socket).toBeNull();
    socket.write('data: after\n\n');
    await new Promise<void>((resolve) => client.on('data', () => received().includes('data: after') && resolve()));
    expect(received()).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*retry: 1000\n\ndata: after\n\n$/);
    const closed = new Promise((resolve) => socket.once('close', resolve));
    closeEveryConnection(server!);
    await closed;
    expect(bareConnections(server!)).toBe(0);
  });

  it("gives the connection's HTTP parser back at once: the next connection is parsed by it, and the server's list no longer holds the stream", async () => {
    const { res, socket } = await exchange();
    const parser = (socket as Socket & { parser?: unknown }).parser;
    expect(parser).toBeTruthy();
    expect(takeOffHttp(res, socket)).toBe('bare');
    expect((socket as Socket & { parser?: unknown }).parser).toBeNull();
    const next = new Promise<Socket>((resolve) => server!.once('request', (req: IncomingMessage) => resolve(req.socket)));
    const second = connect((server!.address() as AddressInfo).port, '127.0.0.1');
    second.on('error', () => undefined);
    second.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    expect((await next as Socket & { parser?: unknown }).parser).toBe(parser);
    // Node's own closeAllConnections reaches only the connections it still parses: the second.
    const firstClosed = new Promise((resolve) => socket.once('close', resolve));
    server!.closeAllConnections();
    expect(socket.destroyed).toBe(false);
    expect(bareConnections(server!)).toBe(1);
    closeEveryConnection(server!);
    await firstClosed;
    second.destroy();
  });

  it("lets nothing of a stream's connection reach the next connection its parser serves: not a part-sent request, nor its rest", async () => {
    const partial = 'GET /evil HTTP/1.1\r\nHost: x\r\nX-Evil: 1\r\nHo';
    const { client, res, socket } = await exchange('GET / HTTP/1.1\r\nHost: x\r\n\r\n' + partial);
    const parser = (socket as Socket & { parser?: unknown }).parser;
    expect(takeOffHttp(res, socket)).toBe('bare');
    const seen: IncomingMessage[] = [];
    server!.on('request', (req: IncomingMessage) => seen.push(req));
    const next = new Promise<IncomingMessage>((resolve) => server!.once('request', resolve));
    const second = connect((server!.address() as AddressInfo).port, '127.0.0.1');
    second.on('error', () => undefined);
    second.write('GET /next HTTP/1.1\r\nHost: y\r\n\r\n');
    const req = await next;
    expect((req.socket as Socket & { parser?: unknown }).parser).toBe(parser);
    expect(req.url).toBe('/next');
    expect(req.headers).toEqual({ host: 'y' });
    // The first client sends the rest of its second request: its own connection is cut, unanswered.
    const cut = new Promise((resolve) => socket.once('close', resolve));
    client.write('st: x\r\n\r\n');
    await cut;
    expect(seen.map((r) => r.url)).toEqual(['/next']);
    expect(req.socket.destroyed).toBe(false);
    second.destroy();
  });

  it('forgets a stream socket once the client has closed it', async () => {
    const { client, res, socket } = await exchange();
    expect(takeOffHttp(res, socket)).toBe('bare');
    expect(bareConnections(server!)).toBe(1);
    const closed = new Promise((resolve) => socket.once('close', resolve));
    client.destroy();
    await closed;
    expect(bareConnections(server!)).toBe(0);
  });

  it('leaves a socket the client reset alone (the server may have begun to let it go)', async () => {
    const { res, socket } = await exchange();
    socket.destroy();
    expect(takeOffHttp(res, socket)).toBe('gone');
  });

  it('changes nothing when one of the server listeners it knows is missing (another Node)', async () => {
    const { res, socket } = await exchange();
    const onTimeout = socket.listeners('timeout')[0] as () => void;
    socket.removeListener('timeout', onTimeout);
    const before = serverListeners(socket);
    expect(takeOffHttp(res, socket)).toBe('unknown_internals');
    expect(res.socket).toBe(socket);
    expect(serverListeners(socket)).toBe(before);
  });

  it('leaves a socket the server is still reading from (another request behind the first) on the server', async () => {
    const head = 'GET / HTTP/1.1\r\nHost: x\r\n\r\n';
    const { res, socket } = await exchange(head + head);
    expect(takeOffHttp(res, socket)).toBe('still_reading');
    expect(res.socket).toBe(socket);
  });
});
