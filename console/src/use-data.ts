// Data a page shows, fetched at once and again every `everyMs` while the page is open (the tab
// hidden: not at all), with the last refusal kept for the page to say.

import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, ApiError } from './api.js';

export interface Data<T> {
  data: T | null;
  error: ApiError | null;
  reload: () => void;
}

export function useData<T>(path: string, everyMs = 0): Data<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [tick, setTick] = useState(0);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  useEffect(() => {
    const abort = new AbortController();
    api<T>(path, { signal: abort.signal }).then(
      (d) => {
        setData(d);
        setError(null);
      },
      (e: unknown) => {
        if (e instanceof ApiError) setError(e);
      },
    );
    return () => abort.abort();
  }, [path, tick]);
  useEffect(() => {
    if (everyMs <= 0) return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') reload();
    }, everyMs);
    return () => clearInterval(timer);
  }, [everyMs, reload]);
  return { data, error, reload };
}
