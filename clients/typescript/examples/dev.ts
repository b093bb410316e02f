// What both examples need to find a relay: the environment, or else the development relay of
// `npm start` (http://127.0.0.1:8080, its key in .data/dev-key.json, offline identities).
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

export interface DevSettings {
  url: string;
  clientId: string;
  clientSecret: string;
}

export function relaySettings(): DevSettings {
  const url = process.env['RELAY_URL'] ?? 'http://127.0.0.1:8080';
  let clientId = process.env['RELAY_CLIENT_ID'];
  let clientSecret = process.env['RELAY_CLIENT_SECRET'];
  if (clientId === undefined || clientSecret === undefined) {
    const file = resolve('.data/dev-key.json');
    try {
      const key = JSON.parse(readFileSync(file, 'utf8')) as { clientId?: string; clientSecret?: string };
      clientId ??= key.clientId;
      clientSecret ??= key.clientSecret;
    } catch {
      throw new Error(`No key: set RELAY_CLIENT_ID and RELAY_CLIENT_SECRET, or run \`npm start\` in the repository root first (it writes ${file}).`);
    }
  }
  return { url, clientId: clientId ?? '', clientSecret: clientSecret ?? '' };
}
