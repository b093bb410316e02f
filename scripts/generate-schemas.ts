// npm run schemas: writes the JSON Schema files client authors in other languages validate against
// (one per payload type, the envelope, the POST body, the meta frame, the close event) and the two
// API descriptions (schemas/asyncapi.json for the stream, schemas/openapi.json for POST and the
// stream's handshake). They are committed; a test fails when they no longer match the TypeBox
// definitions.

import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { apiDocumentFiles } from '../schemas/api-documents.js';
import { schemaFiles } from '../schemas/json-schema.js';

const outDir = fileURLToPath(new URL('../schemas/json/', import.meta.url));
mkdirSync(outDir, { recursive: true });
const files = schemaFiles();
for (const existing of readdirSync(outDir)) if (!(existing in files)) rmSync(join(outDir, existing));
for (const [name, text] of Object.entries(files)) writeFileSync(join(outDir, name), text);
process.stdout.write(`wrote ${Object.keys(files).length} schema files to schemas/json/\n`);

const schemasDir = fileURLToPath(new URL('../schemas/', import.meta.url));
const documents = apiDocumentFiles();
for (const [name, text] of Object.entries(documents)) writeFileSync(join(schemasDir, name), text);
process.stdout.write(`wrote ${Object.keys(documents).map((n) => `schemas/${n}`).join(' and ')}\n`);
