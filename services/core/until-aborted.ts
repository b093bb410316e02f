// A session check the client walked away from: whoever waits for the look-up stops waiting at once
// (the look-up itself is the LookupGate's to drop or finish).

import { RelayError } from './errors.js';

/** The look-up's result, or a rejection as soon as the client goes away. */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(clientGone());
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(clientGone());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function clientGone(): RelayError {
  return new RelayError('unavailable', 'The client closed the connection during the session check.');
}
