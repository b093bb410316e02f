// The prose of the AsyncAPI document (schemas/asyncapi.ts): what a client author reads first, with
// the close catalogue and the stream's timings filled in from their one definition.

import { CLOSE_REASON_CODES, CLOSE_REASONS, type CloseReasonEntry } from './close.js';
import { MIN_RETRY_MS, STREAM_TIMINGS } from './stream-timings.js';
import { NIL_UUID } from './uuid.js';

/** Each close reason with its advice, one Markdown list item a reason. */
export function closeReasonList(): string {
  return CLOSE_REASON_CODES.map((code) => {
    const entry: CloseReasonEntry = CLOSE_REASONS[code];
    const advice = entry.reconnect
      ? `reconnect with Last-Event-ID after \`retryAfterMs\` (${entry.retryAfterMs ?? 0} ms by default; the event's own value wins)`
      : 'do not reconnect';
    return `- \`${code}\`: ${advice}. "${entry.message}"`;
  }).join('\n');
}

export const STREAM_DESCRIPTION = `The Server-Sent Events stream of a channel relay: every client on a multiplayer server hears the
payloads the others send there. Open it with \`GET /\` (or \`/irc\`); the request headers, the query \`host\`
and every refusal before the stream opens are in \`schemas/openapi.json\`, and the rules a client must
follow are in \`docs/CLIENTS.md\`.

**Pairs.** Each delivered payload is two SSE events, in this order: a \`meta\` event (JSON meta frame:
sender \`uuid\`, its \`agent\`, the readable \`channel\`) and immediately after it an unnamed data event
carrying the payload. Pair each \`meta\` with the next unnamed data event. A batch of N entries is N
pairs, in the order sent. The sender's identity is the meta frame's \`uuid\`, never the payload's.

**id: and Last-Event-ID.** Each stored payload's data event has \`id: <sequence in the log>\`, a whole
number that grows along the stream; on a mesh with regions, the stream's position in each region's log
(\`eu:1042.us:77\`). Keep it as an opaque string, exactly as sent, and send the last one as the \`Last-Event-ID\` request header on
every reconnect: the relay replays what the stream missed (same filters), then continues live, with
no gap and no duplicate. If that is older than the log keeps, the stream starts at the oldest kept
frame and an SSE comment says which were lost.

**Keepalive.** Every ${STREAM_TIMINGS.keepaliveMs / 1000} s the relay sends each stream a keepalive pair: a \`meta\` with the nil UUID
(\`${NIL_UUID}\`) as sender, then \`{"type":"keepalive"}\` with no \`id:\` (it is not in the log, and
does not move Last-Event-ID). A client that has heard nothing for ${STREAM_TIMINGS.watchdogMs / 1000} s should drop the connection and
reconnect (with Last-Event-ID). Keepalives from players (\`type: keepalive\` with their own uuid) are
ordinary payloads with an \`id:\`.

**ready.** Once the relay has subscribed the stream, before any frame, it sends \`event: ready\` with
\`{"channel", "resumedAfter", "retryMs"}\` (the channel heard, \`*\` for a bridge stream of every channel; the
Last-Event-ID it resumes after, or null; the advised reconnect wait), then an SSE comment
\`: connected to <channel>\` for people. From \`ready\` on nothing published to the channel is missed.

**retry:** The stream opens with \`retry: ${STREAM_TIMINGS.openRetryMs}\` (milliseconds).
Before a close whose advice is to reconnect the relay sends \`retry: <retryAfterMs>\` again, never less than ${MIN_RETRY_MS}. Use it as the
base of your reconnect back-off (exponential, full jitter, capped at ${STREAM_TIMINGS.backoffCapMs / 1000} s).

**close.** Before the relay ends a stream it sends \`event: close\` with a JSON close event
\`{"reason", "message", "reconnect", "retryAfterMs"}\`, then an SSE comment with the same sentence, then
ends the connection. The reasons:

${closeReasonList()}

One stream per (account, channel) holds across the mesh: opening a second evicts the first, which gets
\`close\` with reason \`evicted\`. The newest copy wins; the evicted one must not reconnect, or two copies
of one account evict each other for ever.

**Who hears what.** A stream hears only its channel (a bridge stream opened without one hears every
channel, and its keepalive meta names the channel \`*\`); its own frames always; \`keepalive\` whenever
the key has any receive scope; direct messages (\`message\`) only when addressed to the account (or on a
bridge key), and only if the receive scopes cover \`message\`; anything else when the receive scopes
(\`irc.messages.receive\` or \`irc.messages.receive.<type>\`, fixed at connect) cover its type.

Ignore SSE comments (lines starting with \`:\`), events with other names, and members you do not know:
the relay may add them.`;
