// The console's files: the bundle `npm run build:console` writes to dist/console (index.html, and
// scripts and styles named by their content hash). Hashed files are cached for a year, index.html
// is revalidated, so a new release is picked up at once and a slow link fetches the bundle once.
// They are the one public part besides the probes: every route registered here declares it.

import { existsSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { AdminError } from './admin-error.js';

/** In a checkout this file is services/admin/; compiled, dist/services/admin/. */
const CANDIDATES = ['../../dist/console/', '../../console/'].map((p) => fileURLToPath(new URL(p, import.meta.url)));
/** The built console, not the source folder console/ of a checkout. */
const MARKER = 'index.html.gz';

/**
 * The folder as the checkout names it: run from a compiled checkout, this file's own dist/ is a link
 * in node_modules/.cache that is removed a day after the sources change, under a service still
 * serving from it.
 */
export function consoleDir(): string | null {
  const dir = CANDIDATES.find((d) => existsSync(d + MARKER));
  return dir === undefined ? null : `${realpathSync(dir)}/`;
}

export async function registerConsole(app: FastifyInstance): Promise<void> {
  await app.register(consoleFiles);
}

async function consoleFiles(app: FastifyInstance): Promise<void> {
  // Scoped to this plugin: the routes @fastify/static registers (it takes no route config) declare
  // themselves public, and nothing outside this scope does.
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, access: 'public' };
  });
  const root = consoleDir();
  if (root === null) {
    app.get('/', async () => {
      throw new AdminError('not_found', 'The console is not built: run npm run build:console (the admin API under /api works without it).');
    });
    return;
  }
  // Where browsers and tools look when a page names no icon; index.html names favicon.svg.
  app.get('/favicon.ico', async (_request, reply) => reply.redirect('/favicon.svg', 301));
  await app.register(fastifyStatic, {
    root,
    preCompressed: true,
    // An array: given a string, @fastify/static looks for the compressed copies of each of its letters.
    index: ['index.html'],
    // Defaults of `send` would set max-age=0; ours says what may be kept, by file.
    cacheControl: false,
    setHeaders: (reply, path) => {
      const hashed = /-[A-Z0-9]{8}\.(js|css)(\.br|\.gz)?$/.test(path);
      void reply.header('cache-control', hashed ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
}
