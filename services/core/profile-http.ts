// The profile API's wire: one GET with the player's bearer token, and the {id, name} it answers.

import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { normaliseUuid } from '../../schemas/uuid.js';
import type { Profile } from './profile.js';

/**
 * The profile API's HTTP client: node:http(s) over a keep-alive agent. Chosen over fetch for what
 * it leaves behind: a burst of new sessions (a reconnect storm) made fetch's per-call objects grow
 * the gateway's heap by about 9 KiB per stream that was never given back (measured with the bench's
 * memory scenario), against under 1 KiB with this.
 */
export class ProfileHttp {
  private readonly url: URL;
  private readonly agent: HttpAgent;
  private readonly request: typeof httpRequest;

  /** `sockets`: as many as look-ups may run at once, so none waits inside the agent. */
  constructor(url: string, sockets: number) {
    this.url = new URL(url);
    const https = this.url.protocol === 'https:';
    this.agent = https ? new HttpsAgent({ keepAlive: true, maxSockets: sockets }) : new HttpAgent({ keepAlive: true, maxSockets: sockets });
    this.request = https ? httpsRequest : httpRequest;
  }

  /**
   * `retryAfter`: the header, as sent, on a refusal (a 429 says how long to wait). A kept-alive
   * socket the API closed while it sat idle fails as it is reused (the server's FIN crosses our
   * request): that one is asked again on a new socket, within the same deadline, since a GET is
   * safe to repeat.
   */
  async get(token: string, timeoutMs: number): Promise<ProfileAnswer> {
    const deadline = performance.now() + timeoutMs;
    try {
      return await this.once(token, timeoutMs);
    } catch (e) {
      const left = deadline - performance.now();
      if (!(e instanceof StaleSocket) || left <= 0) throw e instanceof StaleSocket ? e.cause : e;
      return this.once(token, left);
    }
  }

  private once(token: string, timeoutMs: number): Promise<ProfileAnswer> {
    return new Promise((resolve, reject) => {
      const req = this.request(
        this.url,
        { method: 'GET', agent: this.agent, headers: { authorization: `Bearer ${token}`, accept: 'application/json' } },
        (res) => {
          const status = res.statusCode ?? 0;
          if (status !== 200) {
            res.resume();
            const retryAfter = res.headers['retry-after'];
            res.once('end', () => resolve({ status, body: '', ...(retryAfter !== undefined ? { retryAfter } : {}) }));
            res.once('error', reject);
            return;
          }
          res.setEncoding('utf8');
          let body = '';
          res.on('data', (chunk: string) => {
            body += chunk;
            if (body.length > MAX_PROFILE_BYTES) req.destroy(new Error('profile answer too large'));
          });
          res.once('end', () => resolve({ status, body }));
          res.once('error', reject);
        },
      );
      // A deadline on the whole exchange (setTimeout on the request only measures socket idleness).
      const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      req.once('close', () => clearTimeout(timer));
      req.once('error', (e: NodeJS.ErrnoException) => {
        // No response began on a reused socket: the API never saw this request as answered.
        reject(req.reusedSocket && e.code === 'ECONNRESET' ? new StaleSocket(e) : e);
      });
      req.end();
    });
  }
}

export interface ProfileAnswer {
  status: number;
  body: string;
  retryAfter?: string;
}

class StaleSocket extends Error {
  constructor(override readonly cause: Error) {
    super(cause.message);
  }
}

const MAX_PROFILE_BYTES = 64 * 1024;

export function parseProfile(body: unknown): Profile | null {
  if (typeof body !== 'object' || body === null) return null;
  const { id, name } = body as { id?: unknown; name?: unknown };
  if (typeof id !== 'string' || typeof name !== 'string') return null;
  const uuid = normaliseUuid(id);
  return uuid === null ? null : { uuid, name };
}
