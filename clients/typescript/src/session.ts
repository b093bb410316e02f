// The game session token: asked of the program at the first request and again after a 401, and
// shared by the stream and every send, so one expired token costs one refresh however many requests
// noticed it at once.

import { RelayError } from './errors.js';

export type TokenSource = () => string | Promise<string>;

export class Session {
  private readonly source: TokenSource | undefined;
  private value: string | undefined;
  private asking: Promise<string> | null = null;

  constructor(source: TokenSource | undefined) {
    this.source = source;
  }

  /** A bridge has no session: its API key alone authenticates it. */
  get isBridge(): boolean {
    return this.source === undefined;
  }

  /** The bearer token (undefined for a bridge). Throws RelayError token_unavailable when the program cannot give one. */
  async token(): Promise<string | undefined> {
    const source = this.source;
    if (source === undefined) return undefined;
    if (this.value !== undefined) return this.value;
    this.asking ??= this.ask(source);
    try {
      return await this.asking;
    } catch (e) {
      throw new RelayError('token_unavailable', `the program's token() failed: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
    }
  }

  /** The relay refused `stale` (401): the next token() asks the program again, unless that already happened. */
  invalidate(stale: string | undefined): void {
    if (stale !== undefined && this.value === stale) this.value = undefined;
  }

  private async ask(source: TokenSource): Promise<string> {
    try {
      const t = await source();
      if (typeof t !== 'string' || t.trim() === '') throw new Error('it returned no token');
      this.value = t;
      return t;
    } finally {
      // A failed ask is not kept: the next request asks again.
      this.asking = null;
    }
  }
}
