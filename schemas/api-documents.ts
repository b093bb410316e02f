// The two API descriptions as committed files: schemas/asyncapi.json (the stream) and
// schemas/openapi.json (POST, and the GET handshake). JSON rather than YAML: generated and compared
// byte for byte with no dependency, and every AsyncAPI/OpenAPI tool and code generator reads it.

import { existsSync, readFileSync } from 'node:fs';
import { asyncApiDocument } from './asyncapi.js';
import { openApiDocument } from './openapi.js';

/** The relay's version (package.json), which the documents describe. */
export function relayVersion(): string {
  // From schemas/ in a checkout, from dist/schemas/ once built.
  const file = ['../package.json', '../../package.json'].map((p) => new URL(p, import.meta.url)).find((u) => existsSync(u));
  if (file === undefined) throw new Error('package.json not found');
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

/** File name (under schemas/) to its text. */
export function apiDocumentFiles(version = relayVersion()): Record<string, string> {
  return {
    'asyncapi.json': JSON.stringify(asyncApiDocument(version), null, 2) + '\n',
    'openapi.json': JSON.stringify(openApiDocument(version), null, 2) + '\n',
  };
}
