// A frame's `id:` and the `Last-Event-ID` a client sends back: the one definition the gateway, the
// AsyncAPI and OpenAPI documents and the client library read (docs/REGIONS.md, "An id says where the
// stream is in every region's log").
//
// - Without regions: the frame's sequence in the one log, a whole number ("1042").
// - With regions: the stream's position in each region's log, `<region>:<sequence>` joined by `.`
//   ("eu:1042.us:77"); a region not named is at 0 (the stream has heard nothing from it).
// Clients keep it as an opaque string; both forms are accepted by clients now so that a client built
// before a mesh adds regions keeps resuming after it does.

/** Longest region name. */
const REGION_NAME_MAX = 16;
/**
 * A region's name: how it is written in ids, NATS cluster names and settings. No `_`: stream names
 * join regions with it (`RELAY_EU_AT_US`).
 */
const REGION = `[a-z][a-z0-9-]{0,${REGION_NAME_MAX - 1}}`;
export const REGION_NAME_PATTERN = `^${REGION}$`;
/** Most regions one id may name. */
export const MAX_ID_REGIONS = 16;
/** Most digits of a sequence: 15 stay below 2^53, so the pattern alone bounds it and JSON numbers stay exact. */
const SEQ_DIGITS = 15;
/** Longest id: every region at its longest name and sequence. */
export const MAX_EVENT_ID_LENGTH = MAX_ID_REGIONS * (REGION_NAME_MAX + 1 + SEQ_DIGITS + 1) - 1;

const SEQ = `[0-9]{1,${SEQ_DIGITS}}`;
/** Either form, for documents and clients; only a region named twice passes it and is refused apart. */
export const EVENT_ID_PATTERN = `^(?:${SEQ}|${REGION}:${SEQ}(?:\\.${REGION}:${SEQ}){0,${MAX_ID_REGIONS - 1}})$`;
const EVENT_ID = new RegExp(EVENT_ID_PATTERN);

/** Where a stream is: its sequence in the log (`single`), or in each region's log (missing: 0). */
export type EventPosition = { kind: 'single'; seq: number } | { kind: 'regions'; seqs: ReadonlyMap<string, number> };

/** The position an id names, or null when it is not one the relay sends. */
export function parseEventId(text: string): EventPosition | null {
  if (text.length > MAX_EVENT_ID_LENGTH || !EVENT_ID.test(text)) return null;
  if (!text.includes(':')) return { kind: 'single', seq: Number(text) };
  const seqs = new Map<string, number>();
  for (const part of text.split('.')) {
    const colon = part.indexOf(':');
    const region = part.slice(0, colon);
    // A region named twice has no one meaning: refused rather than guessed.
    if (seqs.has(region)) return null;
    seqs.set(region, Number(part.slice(colon + 1)));
  }
  return { kind: 'regions', seqs };
}

/** A position no id can name: past the grammar's bounds, or (with regions) at 0 everywhere. */
export class UnnamablePosition extends Error {
  readonly code = 'unnamable_position';
}

/**
 * The id of a position: regions in the order given (the mesh's fixed order), those at 0 left out.
 * Throws UnnamablePosition rather than write an id the relay would refuse back: an empty `id:` line
 * even resets what EventSource keeps.
 */
export function formatEventId(position: EventPosition, regionOrder: readonly string[] = []): string {
  const id = position.kind === 'single' ? String(position.seq) : spellRegions(position.seqs, regionOrder);
  if (parseEventId(id) === null) throw new UnnamablePosition(`no id names this position (${id === '' ? 'nothing from any region' : id})`);
  return id;
}

function spellRegions(seqs: ReadonlyMap<string, number>, regionOrder: readonly string[]): string {
  const rest = [...seqs.keys()].filter((r) => !regionOrder.includes(r)).sort();
  return [...regionOrder, ...rest]
    .filter((r) => (seqs.get(r) ?? 0) > 0)
    .map((r) => `${r}:${seqs.get(r)!}`)
    .join('.');
}

/** What a client is told of an id (the AsyncAPI document). */
export const EVENT_ID_NOTE =
  "Where the stream is in the log: this payload's sequence, a whole number, or on a mesh with regions its stream's position in each region's log (`eu:1042.us:77`). Keep it as an opaque string, exactly as sent, and send the last one back as Last-Event-ID.";
