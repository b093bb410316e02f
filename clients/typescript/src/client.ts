// RelayClient: one SSE stream on one server (or, for a bridge, every server) and the sends that go
// with it. The stream is resumable: every reconnect carries Last-Event-ID, so nothing the relay
// stored is lost or seen twice across a restart, a crashed gateway or a dropped connection. It
// follows the relay's advice (`retry:`, the `close` event): a final close (evicted, banned, key
// revoked or expired) or refusal (403, other 4xx) ends in state `closed` and no further request;
// anything else is retried with capped, fully jittered back-off.

import { Backoff } from './backoff.js';
import { checkEnvelopes, type EnvelopeInput } from './envelopes.js';
import { RelayError, retryableStatus } from './errors.js';
import { Emitter } from './events.js';
import type { Payload, PresencePayload } from './generated/wire.js';
import { resolveOptions, type ClientConfig, type RelayClientOptions } from './options.js';
import { Coalescer } from './presence.js';
import { Sender, type SendResult } from './sender.js';
import { Session } from './session.js';
import type { ClientState, RelayClientEvents, SendOutcome } from './state.js';
import { attemptStream, type Attempt } from './stream-attempt.js';
import { wait } from './wait.js';

interface Waiter {
  resolve: () => void;
  reject: (e: RelayError) => void;
}

export class RelayClient extends Emitter<RelayClientEvents> {
  private readonly config: ClientConfig;
  private readonly session: Session;
  private readonly sender: Sender;
  private readonly presence: Coalescer<PresencePayload, SendResult>;
  private readonly backoff: Backoff;
  // Before the first connect() the client is as after close(): nothing under way.
  private current: ClientState = { state: 'closed', reason: 'client_closed', message: 'connect() has not been called', error: null };
  private lastId: string | null;
  /** The relay's `retry:` (ms, within the configured base and cap): the base of the back-off once it has sent one. */
  private retryMs: number | null = null;
  private running = false;
  /** Counts runs (connect() after closed starts a new one): a run that is no longer current stops. */
  private generation = 0;
  private inFlight: AbortController | null = null;
  /** Ends the reconnect wait under way (close()). */
  private wakeup = new AbortController();
  private waiters: Waiter[] = [];
  /** close() was called (and connect() not since): sends reject with client_closed. */
  private stopped = false;

  /** Throws RelayError `misconfigured` for options the relay would refuse or punish; no request is made. */
  constructor(options: RelayClientOptions) {
    super();
    this.config = resolveOptions(options);
    this.session = new Session(options.token);
    this.sender = new Sender(this.config, this.session);
    this.presence = new Coalescer(this.config.presencePerSecond, (p) => this.sender.post(p, 1));
    this.backoff = new Backoff(this.config.backoff);
    this.lastId = this.config.lastEventId ?? null;
  }

  get state(): ClientState {
    return this.current;
  }

  /** The id of the last frame delivered: keep it to resume in another process (options.lastEventId). */
  get lastEventId(): string | null {
    return this.lastId;
  }

  /**
   * Opens the stream and keeps it open. Resolves once it is open (the relay subscribed it, so
   * anything posted afterwards reaches it); rejects with the RelayError that closed the client
   * first (a 403, say, or close()). Calling it again while running returns the same wait; after
   * `closed` it starts again (resuming from lastEventId).
   */
  connect(): Promise<void> {
    this.stopped = false;
    this.sender.resume();
    if (this.current.state === 'open') return Promise.resolve();
    const opened = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    if (!this.running) {
      this.running = true;
      const gen = ++this.generation;
      this.backoff.reset();
      this.wakeup = new AbortController();
      this.setState({ state: 'connecting' });
      this.run(gen).catch((e: unknown) => {
        if (this.live(gen)) this.finish(e instanceof RelayError ? e : new RelayError('invalid_response', String(e), { cause: e }));
      });
    }
    return opened;
  }

  /**
   * Posts one payload or a batch (stored in order, all or nothing). A single presence snapshot is
   * coalesced: at most presencePerSecond go out, the newest each time, and a replaced one resolves
   * with `superseded: true`. 5xx, 408, 429 too_many_session_checks and network failures are resent
   * under one Idempotency-Key (stored once); other refusals, 429 rate_limited among them, throw
   * RelayError with the relay's code and details.
   */
  async send(body: Payload | readonly Payload[]): Promise<SendOutcome> {
    if (this.stopped) throw new RelayError('client_closed', 'close() was called: nothing more is sent until connect()');
    if (!Array.isArray(body) && (body as Payload | null)?.type === 'presence') {
      const r = await this.presence.push(body as PresencePayload);
      return 'superseded' in r ? { superseded: true, accepted: 0, dropped: 0 } : r;
    }
    return this.sender.post(body, Array.isArray(body) ? body.length : 1);
  }

  /**
   * Posts payloads on behalf of other players (bridges: a key with irc.connection.unauthenticated;
   * the relay silently drops envelopes of other keys, as the specification requires). Each envelope
   * names its server in `host`, so one call can reach several servers.
   */
  async sendAs(envelopes: EnvelopeInput | readonly EnvelopeInput[]): Promise<SendResult> {
    if (this.stopped) throw new RelayError('client_closed', 'close() was called: nothing more is sent until connect()');
    const list = checkEnvelopes(envelopes, this.config.server !== undefined);
    return this.sender.post(list, list.length);
  }

  /**
   * Ends the stream for good (state `closed`, reason client_closed), drops a presence snapshot not yet
   * sent and stops every send under way (they reject with client_closed) until connect().
   */
  close(): void {
    this.stopped = true;
    this.sender.stop();
    this.presence.stop();
    if (!this.running) return;
    this.finish(null);
    this.inFlight?.abort();
    this.wakeup.abort();
  }

  private setState(s: ClientState): void {
    this.current = s;
    this.emit('state', s);
  }

  /** Closed for good: by the relay's word (`error`) or by close() (null). */
  private finish(error: RelayError | null): void {
    if (!this.running) return;
    this.running = false;
    this.generation++;
    const e = error ?? new RelayError('client_closed', 'close() was called');
    const waiters = this.waiters;
    this.waiters = [];
    this.setState({ state: 'closed', reason: e.code, message: e.message, error });
    for (const w of waiters) w.reject(e);
  }

  private opened(resumedFrom: string | null): void {
    const waiters = this.waiters;
    this.waiters = [];
    this.setState({ state: 'open', resumedFrom });
    for (const w of waiters) w.resolve();
  }

  private live(gen: number): boolean {
    return this.running && this.generation === gen;
  }

  private async run(gen: number): Promise<void> {
    // Whether the token was already asked again since the last open: a second 401 is final.
    let refreshed = false;
    while (this.live(gen)) {
      const a = await this.openOnce(gen);
      if (!this.live(gen) || a.kind === 'aborted') return;
      let delay: number;
      let why: RelayError;
      if (a.kind === 'refused') {
        const e = a.error;
        if (e.status === 401 && !this.session.isBridge && this.session.invalidate(a.token) && !refreshed) {
          refreshed = true;
          continue;
        }
        if (e.code === 'invalid_last_event_id' && this.lastId !== null) {
          // The relay cannot resume from this id (a mesh gone back from regions to one log, or an id
          // it sent and does not take): start anew as it advises, rather than stop for good.
          this.lastId = null;
        } else if (!retryableStatus(e.status)) return this.finish(e);
        why = e;
        delay = this.backoff.next(e.retryAfterMs, this.baseMs());
      } else if (a.kind === 'failed') {
        why = a.error;
        delay = this.backoff.next(undefined, this.baseMs());
      } else {
        if (a.openedAt !== null) {
          refreshed = false;
          // Only a stream that held counts as recovery: one that opens and drops at once must not
          // reset the back-off (the ping-pong a reset on every open causes).
          if (Date.now() - a.openedAt >= this.config.backoff.capMs) this.backoff.reset();
        }
        if (a.close !== null && !a.close.reconnect) return this.finish(a.close.error);
        if (a.close !== null) {
          why = a.close.error;
          // The relay's advice is a floor for this reconnect, never a licence to come back sooner
          // than the back-off: a relay that closes every stream with retryAfterMs 0 made a storm.
          delay = this.backoff.next(why.retryAfterMs, this.baseMs());
        } else {
          why = a.error ?? new RelayError('stream_ended', 'the relay ended the stream without a close event');
          delay = this.backoff.next(undefined, this.baseMs());
        }
      }
      this.setState({ state: 'reconnecting', attempt: this.backoff.attempts, delayMs: delay, reason: why.code, message: why.message, error: why });
      await wait(delay, this.wakeup.signal);
    }
  }

  private baseMs(): number {
    return this.retryMs ?? this.config.backoff.baseMs;
  }

  /** One request: until the stream ends, or the refusal or failure that prevented it. */
  private async openOnce(gen: number): Promise<Attempt> {
    let token: string | undefined;
    try {
      token = await this.session.token();
    } catch (e) {
      const error = e as RelayError;
      // A refused session (within the refresh interval) or a token no header can carry: final.
      if (error.code === 'invalid_session' || error.code === 'misconfigured') return { kind: 'refused', error, token: undefined };
      return { kind: 'failed', error };
    }
    if (!this.live(gen)) return { kind: 'aborted' };
    const resumedFrom = this.lastId;
    return attemptStream(this.config, token, resumedFrom, {
      live: () => this.live(gen),
      started: (controller) => {
        this.inFlight = controller;
      },
      finished: (controller) => {
        if (this.inFlight === controller) this.inFlight = null;
      },
      opened: () => this.opened(resumedFrom),
      retry: (ms) => {
        this.retryMs = this.backoff.advice(ms) ?? this.retryMs;
      },
      // The id moves only with a frame handed to the program, and never after close() (or a
      // close()+connect() in a listener): what is not delivered is asked for again on resume.
      frame: (meta, payload, id) => {
        if (!this.live(gen)) return;
        if (id !== null) this.lastId = id;
        this.emit('payload', { payload, meta, id });
      },
      invalid: (frame) => {
        if (this.live(gen)) this.emit('invalid_frame', frame);
      },
      final: (error) => {
        if (!this.live(gen)) return;
        this.finish(error);
        this.inFlight?.abort();
      },
    });
  }
}
