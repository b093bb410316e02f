// The `relay` CLI run as an operator runs it (its own process, its own credentials), for the region
// campaign's set-up: `relay nats-permissions --region`, `relay setup`, `relay keys create`.

import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/relay.js', import.meta.url));

/** Its stdout; rejects with its stderr when it exits non-zero or outlives `timeoutMs`. */
export function relayCommand(args: readonly string[], env: Record<string, string>, timeoutMs = 120_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [BIN, ...args], { env: { ...process.env, LOG_LEVEL: 'warn', ...env }, timeout: timeoutMs, maxBuffer: 16 * 2 ** 20 }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`relay ${args.join(' ')} failed (${error.message.split('\n')[0]}): ${stderr.trim().slice(0, 1000)}`));
      else resolve(stdout);
    });
  });
}
