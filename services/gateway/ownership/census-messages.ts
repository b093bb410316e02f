// The owner census's two messages as they travel between gateways (owner-census.ts): questions,
// published on relay.owner-census.ask, and answers, on the asker's subject. A gateway sends the
// questions of one turn of its event loop together, and each message of questions gets one message
// of answers in the same form:
//  - one question: `{id, from, owner, channel}`, answered `{id, node, count, holdsKey}` (what
//    every version of the census reads, so gateways of two versions count each other when opens
//    are few, as in a rolling upgrade);
//  - several: `{from, questions: [{id, owner, channel}, ...]}`, answered `{node, answers: [{id,
//    count, holdsKey}, ...]}`, at most MAX_QUESTIONS_PER_MESSAGE. In a burst of opens the census
//    then costs a message per peer per turn, not per open (docs/BENCHMARKS.md section 7 has the
//    opens a second of six gateways each way).
// Whatever arrives is read as untrusted: a message that does not parse, or has a field of the wrong
// kind anywhere, is dropped whole.

/** A gateway's question: how many streams `owner` holds, and whether one is on `channel`. */
export interface CensusQuestion {
  /** The asking process's own prefix and a count: unique across restarts of one node id. */
  readonly id: string;
  readonly owner: string;
  readonly channel: string | null;
}

/** One gateway's answer to a question. */
export interface CensusAnswer {
  readonly id: string;
  readonly count: number;
  readonly holdsKey: boolean;
}

/** Questions (or answers) in one message, at most: a few hundred bytes each, far below NATS's payload limit. */
export const MAX_QUESTIONS_PER_MESSAGE = 256;

/** What RELAY_NODE_ID allows (config/schema.ts), with room: `from` names a subject token. */
const NODE_ID = /^[A-Za-z0-9_-]{1,128}$/;

export function questionsMessage(from: string, questions: readonly CensusQuestion[]): string {
  if (questions.length === 1) return JSON.stringify({ ...questions[0], from });
  return JSON.stringify({ from, questions });
}

export function answersMessage(node: string, answers: readonly CensusAnswer[], single: boolean): string {
  if (single) return JSON.stringify({ ...answers[0], node });
  return JSON.stringify({ node, answers });
}

/** The questions of one message, and whether it was the one-question form (answered in kind). */
export function parseQuestions(text: string): { from: string; questions: CensusQuestion[]; single: boolean } | null {
  const v = parseObject(text);
  if (v === null || typeof v.from !== 'string' || !NODE_ID.test(v.from)) return null;
  if (v.questions === undefined) {
    const q = question(v);
    return q === null ? null : { from: v.from, questions: [q], single: true };
  }
  const questions = listOf(v.questions, question);
  return questions === null ? null : { from: v.from, questions, single: false };
}

/** The answers of one message, either form. */
export function parseAnswers(text: string): { node: string; answers: CensusAnswer[] } | null {
  const v = parseObject(text);
  if (v === null || typeof v.node !== 'string') return null;
  if (v.answers === undefined) {
    const a = answer(v);
    return a === null ? null : { node: v.node, answers: [a] };
  }
  const answers = listOf(v.answers, answer);
  return answers === null ? null : { node: v.node, answers };
}

function question(v: Record<string, unknown>): CensusQuestion | null {
  if (typeof v.id !== 'string' || typeof v.owner !== 'string') return null;
  if (v.channel !== null && typeof v.channel !== 'string') return null;
  return { id: v.id, owner: v.owner, channel: v.channel };
}

function answer(v: Record<string, unknown>): CensusAnswer | null {
  if (typeof v.id !== 'string' || typeof v.holdsKey !== 'boolean') return null;
  if (typeof v.count !== 'number' || !Number.isSafeInteger(v.count) || v.count < 0) return null;
  return { id: v.id, count: v.count, holdsKey: v.holdsKey };
}

/** Every entry read by `one`, or null when the list is not one, is empty or too long, or an entry fails. */
function listOf<T>(list: unknown, one: (v: Record<string, unknown>) => T | null): T[] | null {
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_QUESTIONS_PER_MESSAGE) return null;
  const out: T[] = [];
  for (const item of list as unknown[]) {
    const v = isObject(item) ? one(item) : null;
    if (v === null) return null;
    out.push(v);
  }
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function parseObject(text: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(text);
    return isObject(v) ? v : null;
  } catch {
    return null;
  }
}
