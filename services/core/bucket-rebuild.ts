// `relay setup --rebuild-feeds`: gives a bucket made by a release before change feeds its feed
// (subjects.ts FEED_BUCKETS). nats-server 2.9 cannot add a RePublish to an existing stream, so the
// bucket is copied aside, its stream made again with the feed, and the entries copied back, all
// inside JetStream (by stream sources), never through this process. Each step can be run
// again: a rebuild stopped anywhere resumes where it was, and the copy aside is removed only once
// the entries are back. Needs a NATS user that may delete streams (not the `cli` role's).

import { JetStreamApiCodes, JetStreamApiError, StorageType, type JetStreamManager, type StreamInfo } from '@nats-io/jetstream';
import { newStreamConfig, type StreamPlan } from './nats-layout.js';
import type { Logger } from './logger.js';

/** What to do about a bucket made before change feeds (bucket-rebuild.ts). */
export const FEED_REBUILD =
  'which the ingress and gateway follow it by, and JetStream cannot add one in place: run `relay setup --rebuild-feeds` once, as a NATS user that may delete streams (every entry is kept; docs/OPERATIONS.md "Upgrading to change feeds")';

/** How long one copy may take before the rebuild stops (and can be run again). */
const COPY_DEADLINE_MS = 120_000;
const POLL_MS = 100;

/** The stream the entries wait in while their bucket's stream is made again. */
export function asideStream(plan: StreamPlan): string {
  return `${plan.stream}_REBUILD`;
}

/** Whether the bucket's stream lacks the feed its plan gives it. */
export function lacksFeed(plan: StreamPlan, info: StreamInfo): boolean {
  const r = plan.shape.republish;
  return plan.bucket !== undefined && r !== undefined && (info.config.republish?.src !== r.src || info.config.republish.dest !== r.dest);
}

async function infoOf(jsm: JetStreamManager, stream: string): Promise<StreamInfo | null> {
  return jsm.streams.info(stream).catch((e: unknown) => {
    if (e instanceof JetStreamApiError && e.code === JetStreamApiCodes.StreamNotFound) return null;
    throw e;
  });
}

async function until(what: string, done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + COPY_DEADLINE_MS;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`${what} took longer than ${COPY_DEADLINE_MS / 1000} s; run relay setup --rebuild-feeds again to go on`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** Rebuilds one bucket's stream with its feed, keeping every entry; a no-op for one that has it. */
export async function rebuildWithFeed(jsm: JetStreamManager, plan: StreamPlan, logger: Logger): Promise<boolean> {
  const aside = asideStream(plan);
  const current = await infoOf(jsm, plan.stream);
  // Neither the bucket nor a copy of it: nothing to keep (setup creates it with its feed).
  if (current === null && (await infoOf(jsm, aside)) === null) return false;
  if (current !== null && !lacksFeed(plan, current) && (current.config.sources?.length ?? 0) === 0) {
    if ((await infoOf(jsm, aside)) !== null) await jsm.streams.delete(aside);
    return false;
  }
  if (current !== null && lacksFeed(plan, current)) {
    // Sourced, not mirrored: a mirror could not be made a stream of its own again, and the bucket's
    // new stream, of the same name, would then source what mirrors it (JetStream: "detected cycle").
    if ((await infoOf(jsm, aside)) === null) {
      await jsm.streams.add({ name: aside, sources: [{ name: plan.stream }], storage: StorageType.File, num_replicas: plan.limits.num_replicas });
    }
    await until(`copying ${plan.label} aside`, async () => {
      const [a, s] = await Promise.all([jsm.streams.info(aside), jsm.streams.info(plan.stream)]);
      return a.sources?.find((x) => x.name === plan.stream)?.lag === 0 && a.state.messages >= s.state.messages;
    });
    const held = await jsm.streams.info(aside);
    await jsm.streams.update(aside, { ...held.config, sources: [] });
    logger.info({ stream: plan.stream, aside }, 'copied the bucket aside; making its stream again with its change feed');
    await jsm.streams.delete(plan.stream);
  }
  if ((await infoOf(jsm, plan.stream)) === null) {
    const held = await jsm.streams.info(aside);
    await jsm.streams.add({ ...newStreamConfig(plan), sources: [{ name: aside }] });
    await until(`copying ${plan.label} back`, async () => {
      const info = await jsm.streams.info(plan.stream);
      const source = info.sources?.find((s) => s.name === aside);
      // Each entry copied back takes a new sequence (so do writes made meanwhile): all are back once
      // the source reports no lag and the stream has taken at least as many as were held.
      return source !== undefined && source.lag === 0 && info.state.last_seq >= held.state.messages;
    });
  }
  const rebuilt = await jsm.streams.info(plan.stream);
  await jsm.streams.update(plan.stream, { ...rebuilt.config, sources: [] });
  await jsm.streams.delete(aside);
  logger.info({ stream: plan.stream }, 'the bucket has its change feed, with every entry it held');
  return true;
}
