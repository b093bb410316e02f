// Waiting for something no event announces (a process answering HTTP, a KV change reaching another
// process, a child going away): re-check every few milliseconds until it holds or time runs out.
// The one poll loop of dev, the mesh script, benchmarks and tests.

export interface PollOptions {
  /** How long to keep trying; default 10 s. */
  timeoutMs?: number;
  /** Pause between tries; default 25 ms. */
  intervalMs?: number;
  /**
   * Asked before every try: a sentence when waiting longer is pointless (the process that was to
   * answer has exited), so the caller hears it at once instead of after the timeout.
   */
  giveUp?: () => string | undefined;
  /** Appended to the timeout's message (a log file's tail, say). */
  detail?: () => string;
}

type Check<T> = () => Promise<T | undefined | false> | T | undefined | false;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function optionsOf(options: number | PollOptions): PollOptions {
  return typeof options === 'number' ? { timeoutMs: options } : options;
}

/**
 * The first value of `check` that is neither undefined nor false, or undefined when time runs out.
 * For callers to whom a timeout is an answer (stop waiting and kill, report "not reached").
 */
export async function pollUntil<T>(check: Check<T>, options: number | PollOptions = {}): Promise<T | undefined> {
  const { timeoutMs = 10_000, intervalMs = 25, giveUp } = optionsOf(options);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reason = giveUp?.();
    if (reason !== undefined) throw new Error(reason);
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) return undefined;
    await sleep(intervalMs);
  }
}

/** Like pollUntil, but running out of time is an error that says what was awaited and for how long. */
export async function waitUntil<T>(check: Check<T>, what: string, options: number | PollOptions = {}): Promise<T> {
  const opts = optionsOf(options);
  const v = await pollUntil(check, opts);
  if (v !== undefined) return v;
  const detail = opts.detail?.() ?? '';
  throw new Error(`timed out after ${opts.timeoutMs ?? 10_000} ms waiting for ${what}${detail === '' ? '' : `:\n${detail}`}`);
}

/** The status a URL answers with, or 0 when nothing answers; the body is discarded. Never throws. */
export async function httpStatus(url: string, init?: RequestInit): Promise<number> {
  try {
    const r = await fetch(url, init);
    await r.body?.cancel().catch(() => undefined);
    return r.status;
  } catch {
    return 0;
  }
}

/** Whether a URL answers 2xx (false when it answers otherwise or not at all). */
export async function httpOk(url: string, init?: RequestInit): Promise<boolean> {
  const status = await httpStatus(url, init);
  return status >= 200 && status < 300;
}

/** The JSON a URL answers 2xx with (a monitoring endpoint), or undefined otherwise. Never throws. */
export async function httpJson<T>(url: string): Promise<T | undefined> {
  try {
    const r = await fetch(url);
    if (!r.ok) {
      await r.body?.cancel().catch(() => undefined);
      return undefined;
    }
    return (await r.json()) as T;
  } catch {
    return undefined;
  }
}
