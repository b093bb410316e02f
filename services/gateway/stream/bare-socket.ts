// A stream's socket taken off Node's HTTP server once its head is written, as Node itself does for
// an upgrade. Node keeps about 3 KiB of heap per open response (the request and the response, the
// parser's bound callbacks, the server's listeners on the socket and their state); a stream reads
// nothing after its request and writes only to its socket, so none of that is needed once the head
// is out. Where this Node's HTTP internals are not the ones expected below, the socket stays on the
// server as before: only the memory differs.
//
// The parser goes back to Node's pool of parsers at once (or is closed, when the pool is full), as
// the server's own close listener would have done at the socket's end: kept for the stream's life,
// its native half held about 8.6 KiB of malloc'd memory per stream on Node 24 (jemalloc's heap
// profile of a gateway; docs/BENCHMARKS.md section 7). That also takes the socket out of the
// server's list of connections, so the process keeps its own set of bare sockets for
// closeEveryConnection() at shutdown. From here the socket itself answers what the server's
// listeners did:
//  - bytes from the client after the hand-off: an SSE client sends nothing after its request, and a
//    pipelined request would never be answered: the connection is cut (part of a second request
//    that came with the GET goes with the parser; a whole one keeps the socket on the server);
//  - the client's end of the connection: the socket ends too (the server does not allow half-open);
//  - an error: the socket is destroyed, and its close ends the stream.

import type { Server, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';

interface HttpParser {
  incoming: unknown;
}

interface HttpCommon {
  freeParser?: (parser: HttpParser, req: null, socket: Socket) => void;
}

type HttpSocket = Socket & { parser?: HttpParser | null; _httpMessage?: unknown; server?: object | null };

// Node's own module of HTTP internals (what its upgrade path uses), read once.
const common = createRequire(import.meta.url)('_http_common') as HttpCommon;

/** The listeners Node's HTTP server puts on each connection's socket, by event, as Node names them. */
const SERVER_LISTENERS: ReadonlyArray<readonly [string, string]> = [
  ['data', 'bound socketOnData'],
  ['end', 'bound socketOnEnd'],
  ['close', 'bound socketOnClose'],
  ['drain', 'bound socketOnDrain'],
  ['error', 'socketOnError'],
  ['timeout', 'socketOnTimeout'],
  ['resume', 'onSocketResume'],
  ['pause', 'onSocketPause'],
];

/** The sockets taken off each server and not yet closed (Node's connection list no longer has them). */
const bareSockets = new WeakMap<object, Set<Socket>>();

/**
 * What became of a stream's socket: `bare`, off the server; `gone`, destroyed already (the client
 * reset it; the server's listeners may have begun to go); `still_reading`, the server is still
 * reading from it (a body sent with the GET, or another request behind it), so it keeps the socket;
 * `unknown_internals`, this Node's HTTP server is not the one expected here (the gateway says so once).
 */
export type TakeOff = 'bare' | 'gone' | 'still_reading' | 'unknown_internals';

/** Takes the socket of `res` (whose head is written) off the HTTP server; changes nothing unless `bare`. */
export function takeOffHttp(res: ServerResponse, socket: Socket): TakeOff {
  if (socket.destroyed) return 'gone';
  const s = socket as HttpSocket;
  const parser = s.parser;
  const freeParser = common.freeParser;
  if (typeof freeParser !== 'function') return 'unknown_internals';
  if (parser === undefined || parser === null || s._httpMessage !== res) return 'unknown_internals';
  if (parser.incoming !== res.req || !res.req.complete) return 'still_reading';
  // A server's own connection always names it; without one, closeEveryConnection could not find it.
  const server = s.server ?? null;
  if (server === null) return 'unknown_internals';
  const found: Array<readonly [string, (...args: unknown[]) => void]> = [];
  for (const [event, name] of SERVER_LISTENERS) {
    const listeners = socket.listeners(event).filter((l) => l.name === name);
    if (listeners.length !== 1) return 'unknown_internals';
    found.push([event, listeners[0] as (...args: unknown[]) => void]);
  }
  res.detachSocket(socket);
  for (const [event, listener] of found) socket.removeListener(event, listener);
  // Listening before the parser is freed: the socket never goes without an error listener.
  socket.on('end', onClientEnd);
  socket.on('error', onSocketError);
  socket.on('close', onSocketClose);
  let sockets = bareSockets.get(server);
  if (sockets === undefined) bareSockets.set(server, (sockets = new Set()));
  sockets.add(socket);
  // Freed before 'data' is listened to: the server wrapped on/addListener/prependListener to hand
  // reading back from the parser, and called on a socket without one the wrapper puts the plain
  // methods back.
  freeParser(parser, null, socket);
  socket.on('data', onClientBytes);
  // Reading was the parser's, which paused the socket as it saw fit: the socket reads for itself now.
  socket.resume();
  return 'bare';
}

function onClientBytes(this: Socket): void {
  this.destroy();
}

function onClientEnd(this: Socket): void {
  this.end();
}

function onSocketError(this: Socket): void {
  this.destroy();
}

function onSocketClose(this: HttpSocket): void {
  if (this.server != null) bareSockets.get(this.server)?.delete(this);
}

/** Ends every connection of `server` now: those on it (its closeAllConnections) and those taken off it here. */
export function closeEveryConnection(server: Server): void {
  server.closeAllConnections();
  for (const socket of bareSockets.get(server) ?? []) socket.destroy();
}

/** How many sockets taken off `server` are still open (what closeEveryConnection would end beyond Node's list). */
export function bareConnections(server: Server): number {
  return bareSockets.get(server)?.size ?? 0;
}
