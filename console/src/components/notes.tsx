// The small pieces every page uses: a refusal said in words, a loading line, a page heading.

import type { ComponentChildren } from 'preact';
import type { ApiError } from '../api.js';

export function ErrorNote({ error }: { error: ApiError | null }) {
  if (error === null) return null;
  return (
    <p class="error" role="alert">
      {error.message} <span class="code">({error.code})</span>
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return <p class="muted">Loading {what}…</p>;
}

export function Page({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        {title}
      </h1>
      {children}
    </section>
  );
}
