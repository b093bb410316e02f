// An SSE client on a raw socket: it writes the HTTP request itself and parses the response bytes
// (chunked or not) into events, comments and `retry:` lines, so tests see exactly what a client would.

import { connect, type Socket } from 'node:net';

export interface SseEvent {
  event: string | null;
  data: string;
  id: string | null;
}

export interface Meta {
  uuid: string;
  agent: string | null;
  channel: string;
}

export interface Pair {
  meta: Meta;
  data: Record<string, unknown> & { type: string };
  id: number | null;
  /** The `id:` line as sent (with regions, a position in each region's log). */
  rawId: string | null;
}

const NIL = '00000000-0000-0000-0000-000000000000';

export class SseStream {
  status = 0;
  headers: Record<string, string> = {};
  /** The body of a refusal (non-200), parsed when it is JSON. */
  body: unknown = null;
  readonly comments: string[] = [];
  readonly retries: number[] = [];
  readonly events: SseEvent[] = [];
  /** Resolves when the server ends the stream or the socket closes. */
  readonly ended: Promise<void>;
  private readonly socket: Socket;
  private raw = Buffer.alloc(0);
  private headDone = false;
  private chunked = false;
  private text = '';
  private pending: Partial<SseEvent> & { dataLines?: string[] } = {};
  private readIndex = 0;
  private waiters: Array<() => void> = [];
  private isEnded = false;
  private resolveHead!: () => void;
  readonly head: Promise<void>;

  constructor(socket: Socket) {
    this.socket = socket;
    this.head = new Promise((resolve) => (this.resolveHead = resolve));
    this.ended = new Promise((resolve) => {
      const done = (): void => {
        this.isEnded = true;
        this.resolveHead();
        this.wake();
        resolve();
      };
      socket.on('close', done);
      socket.on('error', done);
    });
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
  }

  get isClosed(): boolean {
    return this.isEnded;
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  private onData(chunk: Buffer): void {
    this.raw = Buffer.concat([this.raw, chunk]);
    if (!this.headDone) {
      const end = this.raw.indexOf('\r\n\r\n');
      if (end === -1) return;
      const head = this.raw.subarray(0, end).toString('latin1').split('\r\n');
      this.status = Number(head[0]!.split(' ')[1]);
      for (const line of head.slice(1)) {
        const i = line.indexOf(':');
        this.headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      this.chunked = /chunked/i.test(this.headers['transfer-encoding'] ?? '');
      this.raw = this.raw.subarray(end + 4);
      this.headDone = true;
      this.resolveHead();
    }
    this.decodeBody();
  }

  private decodeBody(): void {
    if (!this.chunked) {
      this.onText(this.raw.toString('utf8'));
      this.raw = Buffer.alloc(0);
      return;
    }
    for (;;) {
      const lineEnd = this.raw.indexOf('\r\n');
      if (lineEnd === -1) return;
      const size = parseInt(this.raw.subarray(0, lineEnd).toString('latin1'), 16);
      if (size === 0) {
        this.raw = Buffer.alloc(0);
        return;
      }
      if (this.raw.length < lineEnd + 2 + size + 2) return;
      this.onText(this.raw.subarray(lineEnd + 2, lineEnd + 2 + size).toString('utf8'));
      this.raw = this.raw.subarray(lineEnd + 2 + size + 2);
    }
  }

  private onText(text: string): void {
    if (this.status !== 200) {
      this.text += text;
      try {
        this.body = JSON.parse(this.text);
      } catch {
        this.body = this.text;
      }
      this.wake();
      return;
    }
    this.text += text;
    let nl: number;
    while ((nl = this.text.indexOf('\n')) !== -1) {
      const line = this.text.slice(0, nl).replace(/\r$/, '');
      this.text = this.text.slice(nl + 1);
      this.onLine(line);
    }
    this.wake();
  }

  private onLine(line: string): void {
    if (line === '') {
      if (this.pending.dataLines !== undefined) {
        this.events.push({ event: this.pending.event ?? null, data: this.pending.dataLines.join('\n'), id: this.pending.id ?? null });
      }
      this.pending = {};
      return;
    }
    if (line.startsWith(':')) {
      this.comments.push(line.slice(1).trim());
      return;
    }
    const i = line.indexOf(':');
    const field = i === -1 ? line : line.slice(0, i);
    const value = i === -1 ? '' : line.slice(i + 1).replace(/^ /, '');
    if (field === 'event') this.pending.event = value;
    else if (field === 'data') (this.pending.dataLines ??= []).push(value);
    else if (field === 'id') this.pending.id = value;
    else if (field === 'retry') this.retries.push(Number(value));
  }

  /** Waits until `check` holds, re-checking on every byte received; fails after `timeoutMs`. */
  async until<T>(check: () => T | undefined, what: string, timeoutMs = 5000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = check();
      if (v !== undefined) return v;
      if (this.isEnded) throw new Error(`stream ended while waiting for ${what}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** The JSON body of a refusal (any status but 200). */
  async refusal(timeoutMs?: number): Promise<{ status: number; body: { error: string; message: string } & Record<string, unknown> }> {
    const body = await this.until(
      () => (typeof this.body === 'object' && this.body !== null ? this.body : undefined),
      'a JSON error body',
      timeoutMs,
    );
    return { status: this.status, body: body as { error: string; message: string } };
  }

  /** The next event after the last one read; the `ready` event that opens the stream is passed over (see `ready`). */
  async nextEvent(timeoutMs?: number): Promise<SseEvent> {
    for (;;) {
      const e = await this.until(() => this.events[this.readIndex], 'an event', timeoutMs);
      this.readIndex++;
      if (e.event !== 'ready') return e;
    }
  }

  /** The data of the `ready` event the relay sends once it has subscribed the stream. */
  async ready(timeoutMs?: number): Promise<{ channel: string; resumedAfter: number | null; resumedAfterId?: string; retryMs: number }> {
    const e = await this.until(() => this.events.find((x) => x.event === 'ready'), 'a ready event', timeoutMs);
    return JSON.parse(e.data) as { channel: string; resumedAfter: number | null; resumedAfterId?: string; retryMs: number };
  }

  /**
   * The next meta + data pair. Server keepalive pairs (nil sender) are skipped unless asked for.
   * Throws if a data event arrives without its meta event immediately before it.
   */
  async nextPair(options: { timeoutMs?: number; serverKeepalives?: boolean } = {}): Promise<Pair> {
    // One deadline for the pair: keepalive pairs skipped on the way do not start it again.
    const deadline = Date.now() + (options.timeoutMs ?? 5000);
    const left = (): number => Math.max(1, deadline - Date.now());
    for (;;) {
      const meta = await this.nextEvent(left());
      if (meta.event !== 'meta') throw new Error(`expected a meta event, got ${JSON.stringify(meta)}`);
      const data = await this.nextEvent(left());
      if (data.event !== null) throw new Error(`expected an unnamed data event after meta, got ${JSON.stringify(data)}`);
      const pair: Pair = {
        meta: JSON.parse(meta.data) as Meta,
        data: JSON.parse(data.data) as Pair['data'],
        id: data.id === null ? null : Number(data.id),
        rawId: data.id,
      };
      if (pair.meta.uuid === NIL && !options.serverKeepalives) continue;
      return pair;
    }
  }

  /** Reads pairs until one satisfies `match`, returning it and every pair read before it. */
  async pairsUntil(match: (p: Pair) => boolean, timeoutMs?: number): Promise<Pair[]> {
    const seen: Pair[] = [];
    for (;;) {
      const p = await this.nextPair({ ...(timeoutMs !== undefined ? { timeoutMs } : {}) });
      seen.push(p);
      if (match(p)) return seen;
    }
  }

  /** The data of the `close` event the relay sends before it ends the stream. */
  async closeEvent(timeoutMs?: number): Promise<{ reason: string; message: string; reconnect: boolean; retryAfterMs?: number }> {
    const e = await this.until(() => this.events.find((x) => x.event === 'close'), 'a close event', timeoutMs);
    return JSON.parse(e.data) as { reason: string; message: string; reconnect: boolean; retryAfterMs?: number };
  }

  async waitForComment(pattern: RegExp, timeoutMs?: number): Promise<string> {
    return this.until(() => this.comments.find((c) => pattern.test(c)), `a comment matching ${pattern}`, timeoutMs);
  }

  /** Resolves when the server closes the stream; fails if it stays open past `timeoutMs`. */
  async waitClosed(timeoutMs = 5000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.ended,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`stream still open after ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
  }

  /** Stops reading from the socket (a client that stalls), without closing it. */
  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  close(): void {
    this.socket.destroy();
  }
}

export interface OpenOptions {
  path?: string;
  headers?: Record<string, string>;
  /** The client socket's own address (127.0.0.2 to .254 are distinct client addresses on loopback). */
  localAddress?: string;
}

/** Opens GET <path> and resolves once the response head is in (or the connection ended). */
export async function openStream(baseUrl: string, options: OpenOptions = {}): Promise<SseStream> {
  const url = new URL(options.path ?? '/', baseUrl);
  const socket = connect({ host: url.hostname, port: Number(url.port), ...(options.localAddress !== undefined ? { localAddress: options.localAddress } : {}) });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const stream = new SseStream(socket);
  const headers = { host: url.host, accept: 'text/event-stream', ...(options.headers ?? {}) };
  const lines = [`GET ${url.pathname}${url.search} HTTP/1.1`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  socket.write(lines.join('\r\n') + '\r\n\r\n');
  await stream.head;
  return stream;
}
