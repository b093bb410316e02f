// Each owner's streams on the other gateways, for MAX_STREAMS_PER_ACCOUNT and MAX_STREAMS_PER_KEY:
// asked of them when a stream opens, not written anywhere. An open asks a question (owner, channel)
// on `relay.owner-census.ask`, sent with the other questions of its turn of the event loop (in one
// message when every peer has said it reads them, one by one to a mesh with an earlier version); every
// gateway counts that owner's streams in its registry plus its own opens of the owner still waiting
// for their census, and answers on the asker's subject, `relay.owner-census.answer.<node>`
// (census-messages.ts has the shapes). The asker waits for the gateways it takes for alive, at most
// CENSUS_WAIT_MS.
//
// Why not a record per owner in a bucket (what this replaced): every open and every close wrote it,
// a replicated write each, as many as the claims themselves; in a cluster storm they were half the
// writes the RAFT groups could not keep up with. A question costs no write, is answered from memory,
// and a lone gateway asks nobody.
//
// What the count may get wrong:
//  - Opens of one owner at the same moment on several gateways count each other (the opens still
//    asking are in each answer, until the turn their stream registers in is over), so a burst
//    spread over gateways can be refused more than the cap asks, but while every gateway answers
//    it is not admitted beyond it: of two such opens, the later to ask hears the earlier one, as
//    asking or as registered.
//  - A peer that does not answer within the wait (stalled, crashed but not yet taken for dead, a
//    version without the census) is counted as holding nothing, told (relay_owner_census_unanswered_total),
//    and not waited for again until it answers a question: after a crash, only the opens of the
//    first wait pay it, not every reconnect until the node timeout.
// Answers come from gateway credentials only (infra/nats/permissions.conf); one that does not parse,
// answers no question of this process, or repeats a node is ignored. A node's name in an answer is
// its own word: whoever holds a gateway credential can answer as any node, as it could hold streams.
// An answer from a node not waited for still counts (one taken for dead that was only paused).

import { randomBytes } from 'node:crypto';
import type { NatsConnection, Subscription } from '@nats-io/nats-core';
import { guarded, loggedThrows } from '../../core/guarded-callback.js';
import type { Logger } from '../../core/logger.js';
import { maxPayload } from '../../core/nats-connection.js';
import { OWNER_CENSUS_ANSWER_PREFIX, OWNER_CENSUS_ASK } from '../../core/subjects.js';
import { systemTimers, type Timers } from '../../core/timers.js';
import { answersMessages, parseAnswers, parseQuestions, questionsMessages, type CensusAnswer, type CensusQuestion } from './census-messages.js';

/** How long an open waits for the other gateways' answers. */
export const CENSUS_WAIT_MS = 1000;

/** What an open needs: streams other nodes hold for the owner, and whether one of them holds its channel. */
export interface RemoteHoldings {
  count: number;
  holdsKey: boolean;
}

export interface OwnerCensusOptions {
  nc: NatsConnection;
  nodeId: string;
  /** The other gateways this node takes for alive now: the answers it waits for. */
  peers: () => Iterable<string>;
  /** This node's registered streams of an owner (the gateway's registry). */
  local: (owner: string) => ReadonlyArray<{ readonly channel: string | null }>;
  /** Called once per gateway that did not answer in time. */
  unanswered?: (node: string) => void;
  logger: Pick<Logger, 'warn'>;
  waitMs?: number;
  timers?: Timers;
}

interface Question {
  /** The peers not heard yet. */
  readonly waiting: Set<string>;
  /** Every node heard (one answer each). */
  readonly heard: Set<string>;
  readonly holdings: RemoteHoldings;
  readonly done: () => void;
}

export class OwnerCensus {
  private readonly o: OwnerCensusOptions;
  private readonly timers: Timers;
  /** This process's prefix of question ids: a restart under the same node id hears no answer meant for its previous life. */
  private readonly prefix = `${randomBytes(6).toString('hex')}.`;
  private readonly asked = new Map<string, Question>();
  /** This node's opens still waiting for their census, by owner: counted in its answers. */
  private readonly asking = new Map<string, number>();
  /** Peers that missed a question: not waited for until they answer one. */
  private readonly silent = new Set<string>();
  /** Peers whose last answer said they read several questions a message. */
  private readonly readsBatches = new Set<string>();
  /** Questions of this turn, sent together once it is over. */
  private unsent: CensusQuestion[] = [];
  /** A question of this turn was asked of a peer not known then to read several a message. */
  private unsentAlone = false;
  private seq = 0;
  private subs: Subscription[] = [];
  private closed = false;
  private toldError = false;
  private toldSend = false;

  constructor(o: OwnerCensusOptions) {
    this.o = o;
    this.timers = o.timers ?? systemTimers;
  }

  /** Answers the other gateways' questions, and hears the answers to this node's. */
  listen(): void {
    const { nc, nodeId } = this.o;
    const thrown = loggedThrows(this.o.logger, 'the owner census');
    this.subs = [
      nc.subscribe(OWNER_CENSUS_ASK, { callback: guarded((err, msg) => (err !== null ? this.failed(err) : this.answer(msg.string())), thrown) }),
      nc.subscribe(OWNER_CENSUS_ANSWER_PREFIX + nodeId, { callback: guarded((err, msg) => (err !== null ? this.failed(err) : this.heard(msg.string())), thrown) }),
    ];
  }

  /** What the other gateways hold for `owner`; `channel`: the opening stream's (null without one). */
  remote(owner: string, channel: string | null): Promise<RemoteHoldings> {
    const holdings: RemoteHoldings = { count: 0, holdsKey: false };
    const peers = new Set(this.o.peers());
    peers.delete(this.o.nodeId);
    if (this.closed || peers.size === 0) return Promise.resolve(holdings);
    const waiting = new Set([...peers].filter((n) => !this.silent.has(n)));
    if (!this.unsentAlone) for (const n of peers) if (!this.readsBatches.has(n)) this.unsentAlone = true;
    const id = this.prefix + ++this.seq;
    this.asking.set(owner, (this.asking.get(owner) ?? 0) + 1);
    return new Promise((resolve) => {
      const cancel = this.timers.after(this.o.waitMs ?? CENSUS_WAIT_MS, () => {
        for (const node of waiting) {
          this.silent.add(node);
          // It may be back as another version: asked one question a message until it says.
          this.readsBatches.delete(node);
          this.o.unanswered?.(node);
        }
        done();
      });
      const done = (): void => {
        cancel();
        this.asked.delete(id);
        resolve(holdings);
        // Still counted until this turn is over: the open registers its stream (or is refused) in
        // the promise jobs of this turn, and the rest of a batch of messages read from the socket
        // together, questions among them, is answered before those jobs run.
        this.timers.afterTurn(() => {
          const n = (this.asking.get(owner) ?? 1) - 1;
          if (n > 0) this.asking.set(owner, n);
          else this.asking.delete(owner);
        });
      };
      this.asked.set(id, { waiting, heard: new Set(), holdings, done });
      // Asked even when every peer is silent: an answer is how a silent peer is waited for again.
      if (this.unsent.push({ id, owner, channel }) === 1) this.timers.afterTurn(() => this.send());
      if (waiting.size === 0) done();
    });
  }

  /** Stops answering and asking; questions still waiting resolve with what they heard. */
  close(): void {
    this.closed = true;
    this.unsent = [];
    for (const s of this.subs) s.unsubscribe();
    this.subs = [];
    for (const q of [...this.asked.values()]) q.done();
  }

  private send(): void {
    const unsent = this.unsent;
    let together = !this.unsentAlone;
    this.unsent = [];
    this.unsentAlone = false;
    const peers = new Set(this.o.peers());
    // A node gone from the mesh is forgotten (a restart comes back under a new id, by default).
    for (const known of [this.silent, this.readsBatches]) for (const node of known) if (!peers.has(node)) known.delete(node);
    for (const node of peers) if (node !== this.o.nodeId && !this.readsBatches.has(node)) together = false;
    for (const text of questionsMessages(this.o.nodeId, unsent, together, maxPayload(this.o.nc))) this.publish(OWNER_CENSUS_ASK, text);
  }

  private publish(subject: string, text: string): void {
    const { nc } = this.o;
    try {
      nc.publish(subject, text);
    } catch (err) {
      // Closing (this node is stopping): the waits end what is unanswered. Anything else (a message
      // over the server's max_payload) is told once: the peers it was for are counted as silent.
      if (nc.isClosed() || nc.isDraining() || this.toldSend) return;
      this.toldSend = true;
      this.o.logger.warn({ err }, 'an owner census message could not be sent: the gateways it was for count as not answering');
    }
  }

  /** Counted as each question is read: what this node holds at that moment. */
  private answer(text: string): void {
    const m = parseQuestions(text);
    if (m === null || m.from === this.o.nodeId) return;
    const answers: CensusAnswer[] = m.questions.map((q) => {
      const mine = this.o.local(q.owner);
      const count = mine.length + (this.asking.get(q.owner) ?? 0);
      return { id: q.id, count, holdsKey: q.channel !== null && mine.some((s) => s.channel === q.channel) };
    });
    for (const text of answersMessages(this.o.nodeId, answers, m.single, maxPayload(this.o.nc))) this.publish(OWNER_CENSUS_ANSWER_PREFIX + m.from, text);
  }

  private heard(text: string): void {
    const m = parseAnswers(text);
    if (m === null || m.node === this.o.nodeId) return;
    const mine = m.answers.filter((a) => a.id.startsWith(this.prefix));
    if (mine.length === 0) return;
    // An answer to any question of this process, late or not: the node answers again, and says
    // whether it reads several questions a message.
    this.silent.delete(m.node);
    if (m.batches) this.readsBatches.add(m.node);
    else this.readsBatches.delete(m.node);
    for (const a of mine) this.heardOne(m.node, a);
  }

  private heardOne(node: string, a: CensusAnswer): void {
    const q = this.asked.get(a.id);
    if (q === undefined || q.heard.has(node)) return;
    q.heard.add(node);
    q.waiting.delete(node);
    q.holdings.count += a.count;
    q.holdings.holdsKey ||= a.holdsKey;
    if (q.waiting.size === 0) q.done();
  }

  /** A subscription refused (the gateway's NATS user may not subscribe to the census's subjects): said once. */
  private failed(err: Error): void {
    if (this.toldError) return;
    this.toldError = true;
    this.o.logger.warn({ err }, 'the owner census stopped: without it the stream caps count only this gateway’s streams, and opens wait for peers’ answers');
  }
}
