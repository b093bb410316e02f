// For the client library's tests: a fetch that records every request and can do to the current
// stream what a network does (reset it, let it go silent, lose a POST's answer after the relay
// stored it), and a recorder that lets a test await what a client saw instead of sleeping.

import type { ClientState, FetchInit, FetchLike, Frame, RelayClient } from '../../clients/typescript/src/index.js';

export interface RecordedRequest {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body: string | undefined;
  at: number;
}

interface LiveStream {
  controller: ReadableStreamDefaultController<Uint8Array>;
  reader: ReadableStreamDefaultReader<Uint8Array>;
  frozen: boolean;
}

export class TestTransport {
  readonly requests: RecordedRequest[] = [];
  private readonly live = new Set<LiveStream>();
  private answersToLose = 0;
  private readonly real: FetchLike;

  constructor(real: FetchLike = (url, init) => fetch(url, init)) {
    this.real = real;
  }

  get gets(): RecordedRequest[] {
    return this.requests.filter((r) => r.method === 'GET');
  }

  get posts(): RecordedRequest[] {
    return this.requests.filter((r) => r.method === 'POST');
  }

  /** The next `n` POSTs reach the relay, which stores them, but their answers never arrive. */
  loseAnswers(n: number): void {
    this.answersToLose = n;
  }

  /** Resets every open stream, as a dropped connection does (no close event, no clean end). */
  cutStreams(): void {
    for (const s of this.live) {
      this.live.delete(s);
      try {
        s.controller.error(new TypeError('terminated: connection reset (test)'));
      } catch {
        // already ended
      }
      s.reader.cancel().catch(() => undefined);
    }
  }

  /** Open streams stop passing bytes on, as a half-open connection does: silence, but no end. */
  freezeStreams(): void {
    for (const s of this.live) s.frozen = true;
  }

  readonly fetch: FetchLike = async (url: string, init: FetchInit): Promise<Response> => {
    this.requests.push({ method: init.method, headers: { ...init.headers }, body: init.body, at: Date.now() });
    const res = await this.real(url, init);
    if (init.method === 'POST' && this.answersToLose > 0) {
      this.answersToLose--;
      await res.text();
      throw new TypeError('fetch failed: socket hang up (test: the answer was lost)');
    }
    if (init.method !== 'GET' || res.body === null || res.status !== 200) return res;
    const reader: ReadableStreamDefaultReader<Uint8Array> = res.body.getReader();
    let entry: LiveStream | null = null;
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        entry = { controller, reader, frozen: false };
        this.live.add(entry);
      },
      pull: async (controller) => {
        for (;;) {
          let chunk: Awaited<ReturnType<typeof reader.read>>;
          try {
            chunk = await reader.read();
          } catch (e) {
            this.live.delete(entry!);
            try {
              controller.error(e);
            } catch {
              // already errored by cutStreams
            }
            return;
          }
          if (chunk.done) {
            this.live.delete(entry!);
            try {
              controller.close();
            } catch {
              // already errored by cutStreams
            }
            return;
          }
          // A frozen stream swallows what arrives: the client sees silence until it gives up.
          if (!entry!.frozen) {
            controller.enqueue(chunk.value);
            return;
          }
        }
      },
      cancel: (reason) => {
        this.live.delete(entry!);
        return reader.cancel(reason);
      },
    });
    return new Response(body, { status: res.status, headers: res.headers });
  };
}

/** What a client saw: its frames and states, with waits that resolve on the event that satisfies them. */
export class Recorder {
  readonly frames: Frame[] = [];
  readonly states: ClientState[] = [];
  /** When each state was entered (Date.now()), index for index. */
  readonly stateAt: number[] = [];
  private waiters: Array<{ check: () => boolean; resolve: () => void }> = [];

  constructor(client: RelayClient) {
    client.on('payload', (f) => {
      this.frames.push(f);
      this.poke();
    });
    client.on('state', (s) => {
      this.states.push(s);
      this.stateAt.push(Date.now());
      this.poke();
    });
  }

  /** Chat lines delivered, in order. */
  chats(): string[] {
    return this.frames.flatMap((f) => (f.payload.type === 'chat' ? [typeof f.payload.message === 'string' ? f.payload.message : JSON.stringify(f.payload.message)] : []));
  }

  /** States by name, in order (e.g. ['connecting', 'open', 'reconnecting', 'open']). */
  names(): string[] {
    return this.states.map((s) => s.state);
  }

  closed(): Extract<ClientState, { state: 'closed' }> | undefined {
    return this.states.find((s): s is Extract<ClientState, { state: 'closed' }> => s.state === 'closed');
  }

  /** Resolves as soon as `check` holds (checked now and after every frame or state). */
  until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; states: ${JSON.stringify(this.names())}, chats: ${JSON.stringify(this.chats())}`));
      }, timeoutMs);
      const waiter = {
        check,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      this.waiters.push(waiter);
    });
  }

  /** Resolves with the first state named `name` (from index `from` of the record). */
  async state<S extends ClientState['state']>(name: S, what: string = name, timeoutMs = 20_000, from = 0): Promise<Extract<ClientState, { state: S }>> {
    const find = (): Extract<ClientState, { state: S }> | undefined =>
      this.states.slice(from).find((s): s is Extract<ClientState, { state: S }> => s.state === name);
    await this.until(() => find() !== undefined, what, timeoutMs);
    return find()!;
  }

  private poke(): void {
    const ready = this.waiters.filter((w) => w.check());
    this.waiters = this.waiters.filter((w) => !ready.includes(w));
    for (const w of ready) w.resolve();
  }
}

export const CLIENT_AGENT = 'clienttest/1.0.0+0123456789abcdef0123456789abcdef01234567';
