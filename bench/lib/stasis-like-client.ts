// The "before" of the client library's figures: a relay client that behaves like the published
// StasisProxy module described in ../shared/notes/real-clients.md (written here from that
// description, not copied). The `eventsource` package (4.x) with a fetch that adds the headers; a
// new EventSource for every reconnect, so Last-Event-ID is never sent; its own reconnect timer on
// every error, 1 s x 2^n capped at 30 s, reset on every successful open; a 15 s watchdog on
// message events; a presence POST on every open. It reads only unnamed (payload) events.
import { EventSource } from 'eventsource';

export interface StasisLikeOptions {
  url: string;
  server: string;
  clientId: string;
  clientSecret: string;
  token: string;
  userAgent: string;
  onPayload?: (payload: { type: string; [k: string]: unknown }) => void;
}

export class StasisLikeClient {
  opens = 0;
  presencePosts = 0;
  private es: EventSource | null = null;
  private attempts = 0;
  private reconnectTimer: ReturnType<typeof setTimeout> | null = null;
  private watchdog: ReturnType<typeof setTimeout> | null = null;
  private stopped = false;
  private readonly o: StasisLikeOptions;

  constructor(options: StasisLikeOptions) {
    this.o = options;
  }

  private get headers(): Record<string, string> {
    return {
      'x-irc-multiplayer-server': this.o.server,
      'client-id': this.o.clientId,
      'client-secret': this.o.clientSecret,
      'user-agent': this.o.userAgent,
      authorization: `Bearer ${this.o.token}`,
    };
  }

  start(): void {
    this.connect();
  }

  stop(): void {
    this.stopped = true;
    this.es?.close();
    this.es = null;
    for (const t of [this.reconnectTimer, this.watchdog]) if (t !== null) clearTimeout(t);
  }

  private resetWatchdog(): void {
    if (this.watchdog !== null) clearTimeout(this.watchdog);
    this.watchdog = setTimeout(() => this.connect(), 15_000);
  }

  private scheduleReconnect(): void {
    if (this.reconnectTimer !== null || this.stopped) return;
    const delay = Math.min(30_000, 1000 * 2 ** this.attempts++);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.connect();
    }, delay);
  }

  private connect(): void {
    if (this.stopped) return;
    if (this.reconnectTimer !== null) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    this.es?.close();
    const es = new EventSource(new URL('/irc', this.o.url).href, {
      fetch: (input, init) => {
        const headers: Record<string, string> = { ...init.headers, ...this.headers, Accept: 'text/event-stream', 'Cache-Control': 'no-cache' };
        // A fresh EventSource has no last id; drop the one the package adds on its own retries, so
        // this client never resumes, as the notes describe.
        delete headers['Last-Event-ID'];
        delete headers['last-event-id'];
        return fetch(input, { ...init, headers });
      },
    });
    this.es = es;
    this.resetWatchdog();
    es.onopen = () => {
      this.attempts = 0;
      this.opens++;
      this.resetWatchdog();
      this.postPresence();
    };
    es.onmessage = (ev) => {
      this.resetWatchdog();
      try {
        this.o.onPayload?.(JSON.parse(String(ev.data)) as { type: string });
      } catch {
        // not JSON: ignored
      }
    };
    es.onerror = () => {
      if (this.es !== es) return;
      this.scheduleReconnect();
    };
  }

  private postPresence(): void {
    this.presencePosts++;
    fetch(new URL('/irc', this.o.url), {
      method: 'POST',
      headers: { ...this.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'presence', inventory: [], attributes: { absorption: 0, health: 20, hunger: 20, oxygen: 300, saturation: 5 } }),
    }).then(
      (r) => r.text(),
      () => undefined,
    );
  }
}
