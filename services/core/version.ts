// The relay's own identity on the wire (the agent of server keepalive frames, the CLI's --version).
import { existsSync, readFileSync } from 'node:fs';

// From services/core in a checkout, from dist/services/core once built.
const candidates = ['../../package.json', '../../../package.json'].map((p) => new URL(p, import.meta.url));
const found = candidates.find((u) => existsSync(u));
const pkg = (found ? JSON.parse(readFileSync(found, 'utf8')) : { name: 'channel-relay', version: '0.0.0' }) as {
  name: string;
  version: string;
};

export const RELAY_VERSION = pkg.version;
export const RELAY_AGENT = `${pkg.name}/${pkg.version}`;
