// The audit trail: every key created or revoked and ban added or lifted, by whom (a console token's
// name, or the CLI's RELAY_ACTOR), newest first.

import type { AuditRecord } from '../../../schemas/records.js';
import { ErrorNote, Loading, Page } from '../components/notes.js';
import { shown, time } from '../format.js';
import { useData } from '../use-data.js';

export function AuditPage() {
  const { data, error } = useData<AuditRecord[]>('/api/audit?limit=500', 10_000);
  return (
    <Page title="Audit">
      <ErrorNote error={error} />
      {data === null ? (
        <Loading what="the audit trail" />
      ) : data.length === 0 ? (
        <p class="muted">No operator action recorded yet.</p>
      ) : (
        <div class="scroll">
          <table aria-label="Audit trail">
            <thead>
              <tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">Details</th></tr>
            </thead>
            <tbody>
              {[...data].reverse().map((r, i) => (
                <tr key={`${r.at}-${i}`}>
                  <td class="when">{time(r.at)}</td>
                  <td>{shown(r.actor)}</td>
                  <td>{r.action}</td>
                  <td class="mono">{r.target}</td>
                  <td>{shown([r.label, r.scopes?.join(' '), r.reason, r.expiresAt !== undefined ? `until ${time(r.expiresAt)}` : undefined].filter((d) => d !== undefined).join('; '))}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Page>
  );
}
