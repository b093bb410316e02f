// What the workload records and the checker reads: each write operation with its outcome as the
// client saw it, each reader's client with the frames it received and its opens and ends, the event
// log as read at the end, and the anomalies the checker finds. Pure data, no behaviour.

/** A POST as the writer saw it. `unknown`: never answered 2xx nor refused for good by the end. */
export type Outcome = 'pending' | 'ok' | 'failed' | 'unknown';

export interface WriteOp {
  /** "w2:57": writer w2's 57th operation. */
  id: string;
  writer: string;
  channel: string;
  /** The chat messages of its entries, in body order ("w2:57:0", ...): unique in the run. */
  entries: string[];
  invokedAt: number;
  completedAt: number | null;
  outcome: Outcome;
  /** The refusal that ended it (failed), or the last one seen. */
  refusal: string | null;
  attempts: number;
  /** With a writer that routes its attempts (writers.ts `route`): the ingress each attempt went to, in order. */
  origins?: string[];
}

/** `Id`: a sequence in the one event log (number), or with regions the id as sent (`a:12.b:7`). */
export interface ReceivedFrame<Id = number> {
  t: number;
  /** The frame's id: its sequence in the event log, or its stream's position in every region's log. */
  id: Id;
  message: string;
}

/** One RelayClient of a reader: one stream at a time, reconnecting with Last-Event-ID. */
export interface ClientRecord<Id = number> {
  /** "r1-0#2": reader r1-0's second client. */
  id: string;
  reader: string;
  account: string;
  channel: string;
  /** With regions: the region whose gateway it streams from (each client stays in one). */
  region?: string;
  /** The Last-Event-ID it started from (null: from the live end). */
  startId: Id | null;
  frames: Array<ReceivedFrame<Id>>;
  /** Each time its stream was confirmed open, and on which gateway. */
  opens: Array<{ t: number; gateway: string }>;
  /** Why it ended for good (evicted, banned, client_closed...), null while it runs. */
  closed: { t: number; reason: string } | null;
}

/** One entry of the event log, read from the stream at the end. */
export interface LogEntry {
  seq: number;
  /** With regions: the region whose log holds it (`seq` is in that log); absent with one log. */
  region?: string;
  channel: string;
  /** The chat message (the write's entry), or what the payload held if it was not one of ours. */
  message: string;
}

export const ANOMALY_CLASSES = [
  /** An acknowledged write missing from the log. */
  'lost',
  /** A write stored more than once. */
  'duplicated',
  /** A write refused for good (4xx) that is in the log anyway. */
  'stored-though-refused',
  /** Something in the log no writer ever sent. */
  'phantom',
  /** A writer's next write stored before its previous acknowledged one, or a batch out of order. */
  'write-order',
  /** A reader's client skipped frames of its channel's log. */
  'gap',
  /** A reader's client received a frame twice. */
  'duplicate-frame',
  /** A reader's client received an older frame after a newer one. */
  'reorder',
  /** A frame whose id is not that message in the log, or not of the channel. */
  'wrong-frame',
  /** With regions: a frame's id that does not name its own place in its region's log, or moves another region without a frame. */
  'wrong-id',
  /** A reader did not reach the end of its channel's log after the quiet period. */
  'not-caught-up',
  /** Two streams of one account both live (receiving frames) after the fault that split them healed. */
  'double-stream',
  /** A reader's stream closed for good for a reason other than its eviction (banned, key revoked...). */
  'closed-for-good',
  /** With regions: a POST to a region's ingress refused or failed while that region was up (cut off or not). */
  'refused-while-up',
  /** A replica of the event log that holds other messages at some sequences than the leader's. */
  'replica-divergence',
  /** An account banned during the run. */
  'banned',
  /** A relay process not ready, or not running, at the end. */
  'unready',
  /** A process (a NATS node, a relay) that exited without being told to. */
  'crash',
] as const;
export type AnomalyClass = (typeof ANOMALY_CLASSES)[number];

export interface Anomaly {
  class: AnomalyClass;
  /** When it shows (ms since the run began): the report quotes the history around it. */
  t: number;
  /** The history subjects involved (ops, clients). */
  subjects: string[];
  text: string;
}

/** A fault's time on the run's clock, for the rules that wait until it healed. */
export interface FaultWindow {
  id: number;
  start: number;
  end: number;
}
