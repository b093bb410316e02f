// A TypeScript author generates types from schemas/openapi.json with openapi-typescript and uses
// them: a payload of each shape, the POST answer and a refusal body must type-check, and a payload
// of an unknown type must not.

import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'openapi-typescript-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const USE = `import type { components, paths } from './openapi.js';
type Payload = components['schemas']['Payload'];
type Accepted = paths['/']['post']['responses'][200]['content']['application/json'];
export const death: Payload = { type: 'death', player: { uuid: '3f1e8d2a-6b7c-4d5e-9f10-112233445566', name: 'Steve' }, timestamp: 1763800000000 };
export const logout: Payload = {
  type: 'logout',
  player: { uuid: '3f1e8d2a-6b7c-4d5e-9f10-112233445566', name: 'Steve' },
  position: { x: 0, y: 64, z: 0, dimension: 'overworld', phase: 'sneaking', pitch: 0, yaw: 90 },
};
export const batch: components['schemas']['PostBody'] = [death, { user: '3f1e8d2a-6b7c-4d5e-9f10-112233445566', agent: 'bridge/1', message: { type: 'keepalive' } }];
export const accepted: Accepted = { accepted: 2, dropped: 0 };
export const refusal: components['schemas']['ErrorBody'] = { error: 'missing_scope', message: 'no', scope: 'irc.messages.send.chat' };
export function kind(p: Payload): string {
  return p.type === 'chat' ? 'chat' : p.type;
}
`;

describe('TypeScript generated from schemas/openapi.json', () => {
  it('type-checks a use of the payloads, the POST answer and a refusal, and refuses an unknown payload type', async () => {
    const ast = await openapiTS(new URL('../schemas/openapi.json', import.meta.url));
    writeFileSync(join(dir, 'openapi.ts'), astToString(ast));
    writeFileSync(join(dir, 'use.ts'), USE);
    writeFileSync(join(dir, 'bad.ts'), `import type { components } from './openapi.js';\nexport const p: components['schemas']['Payload'] = { type: 'teleport' };\n`);
    const tsc = (file: string) =>
      run(process.execPath, [new URL('../node_modules/typescript/bin/tsc', import.meta.url).pathname, '--noEmit', '--strict', '--module', 'nodenext', '--target', 'es2022', join(dir, file)]);
    await expect(tsc('use.ts')).resolves.toBeDefined();
    await expect(tsc('bad.ts')).rejects.toMatchObject({ stdout: expect.stringMatching(/bad\.ts.*error TS/) as unknown });
  }, 60_000);
});
