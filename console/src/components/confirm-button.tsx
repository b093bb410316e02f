// A destructive action asks twice, in the page (no window.confirm, which a keyboard user can miss
// and a screen reader announces poorly): the first press arms it, the second acts.

import { useState } from 'preact/hooks';

export function ConfirmButton({ label, confirm, onConfirm }: { label: string; confirm: string; onConfirm: () => Promise<void> }) {
  const [armed, setArmed] = useState(false);
  const [busy, setBusy] = useState(false);
  if (!armed) return <button type="button" onClick={() => setArmed(true)}>{label}</button>;
  return (
    <span class="confirm">
      <button
        type="button"
        class="danger"
        disabled={busy}
        ref={(el) => el?.focus()}
        onClick={() => {
          setBusy(true);
          void onConfirm().finally(() => {
            setBusy(false);
            setArmed(false);
          });
        }}
      >
        {confirm}
      </button>
      <button type="button" onClick={() => setArmed(false)}>Cancel</button>
    </span>
  );
}
