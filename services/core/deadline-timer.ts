// A timer for a moment however far away. Node's timers hold at most 2^31-1 ms (24.8 days) and fire
// at once beyond that (with a warning), so a key expiring in a month must be waited for in steps.

const MAX_TIMER_MS = 2 ** 31 - 1;

export interface DeadlineTimer {
  cancel(): void;
}

/** Calls `fire` at epoch ms `at` (at once if it has passed). The timer never keeps the process alive. */
export function atDeadline(at: number, fire: () => void, now: () => number = Date.now): DeadlineTimer {
  let timer: NodeJS.Timeout;
  const arm = (): void => {
    const delay = at - now();
    timer = delay > MAX_TIMER_MS ? setTimeout(arm, MAX_TIMER_MS) : setTimeout(fire, Math.max(0, delay));
    timer.unref();
  };
  arm();
  return { cancel: () => clearTimeout(timer) };
}
