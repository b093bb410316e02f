// A bridge's re-attribution envelopes, checked before anything is posted: a mistake in them (a null
// entry, a host that is not text, an agent the relay's text rule refuses) is a rejected promise with
// `misconfigured`, never a synchronous TypeError out of sendAs().

import { agentProblem } from './agent-text.js';
import { RelayError } from './errors.js';
import type { Envelope } from './generated/wire.js';

/** A re-attribution envelope as a bridge writes it (legacy spellings left out). */
export type EnvelopeInput = Pick<Envelope, 'user' | 'host' | 'message'> & { agent: string };

/** The envelopes as a list, or throws misconfigured; `fallback`: the client has a server for an envelope without host. */
export function checkEnvelopes(envelopes: unknown, fallback: boolean): readonly EnvelopeInput[] {
  const list: readonly unknown[] = Array.isArray(envelopes) ? envelopes : [envelopes];
  for (const [i, e] of list.entries()) {
    if (typeof e !== 'object' || e === null || Array.isArray(e)) throw new RelayError('misconfigured', `envelope ${i} is not an object`);
    const agent: unknown = (e as { agent?: unknown }).agent;
    const agentIssue = typeof agent === 'string' ? agentProblem(agent) : null;
    if (agentIssue !== null) throw new RelayError('misconfigured', `envelope ${i}: agent ${agentIssue}`);
    const host: unknown = (e as { host?: unknown }).host;
    if (host !== undefined && typeof host !== 'string') throw new RelayError('misconfigured', `envelope ${i}: host must be a string (the server's name) or left out`);
    if ((host === undefined || host.trim() === '') && !fallback) {
      throw new RelayError('misconfigured', `envelope ${i} names no host, and the client has no server to fall back on`);
    }
  }
  return list as readonly EnvelopeInput[];
}
