// The owner census's two messages as they travel between gateways (owner-census.ts): a question,
// published on relay.owner-census.ask, and an answer, on the asker's subject. Whatever arrives is
// read as untrusted: a message that does not parse, or has a field of the wrong kind, is dropped.

/** A gateway's question: how many streams `owner` holds, and whether one is on `channel`. */
export interface CensusQuestion {
  /** The asking process's own prefix and a count: unique across restarts of one node id. */
  readonly id: string;
  readonly from: string;
  readonly owner: string;
  readonly channel: string | null;
}

/** One gateway's answer to a question. */
export interface CensusAnswer {
  readonly id: string;
  readonly node: string;
  readonly count: number;
  readonly holdsKey: boolean;
}

/** What RELAY_NODE_ID allows (config/schema.ts), with room: `from` names a subject token. */
const NODE_ID = /^[A-Za-z0-9_-]{1,128}$/;

export function parseQuestion(text: string): CensusQuestion | null {
  const v = parseObject(text);
  if (v === null || typeof v.id !== 'string' || typeof v.from !== 'string' || !NODE_ID.test(v.from) || typeof v.owner !== 'string') return null;
  if (v.channel !== null && typeof v.channel !== 'string') return null;
  return { id: v.id, from: v.from, owner: v.owner, channel: v.channel };
}

export function parseAnswer(text: string): CensusAnswer | null {
  const v = parseObject(text);
  if (v === null || typeof v.id !== 'string' || typeof v.node !== 'string' || typeof v.holdsKey !== 'boolean') return null;
  if (typeof v.count !== 'number' || !Number.isSafeInteger(v.count) || v.count < 0) return null;
  return { id: v.id, node: v.node, count: v.count, holdsKey: v.holdsKey };
}

function parseObject(text: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
