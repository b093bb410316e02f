// Lint: typescript-eslint's type-checked recommended rules (a promise nobody awaits or handles is an
// error), with the project's own: no `any`, no ts-ignore, `import type` for types.
import tseslint from 'typescript-eslint';

/** What `npm run build` ships (services/, schemas/) never reaches into development code: tsc would compile whatever it imports into dist/. */
const SHIPPED_ONLY = {
  group: ['**/tools/*', '**/test/*', '**/bench/*', '**/scripts/*'],
  message: 'The build ships services/ and schemas/ only; development launchers and helpers live in tools/.',
};
/** Ownership has one door: outside services/gateway/ownership/, only its entry file is imported (tests of its parts excepted). */
const OWNERSHIP_DOOR = {
  group: ['**/ownership/*', '!**/ownership/ownership.js'],
  message: 'Stream ownership is reached through services/gateway/ownership/ownership.ts alone.',
};
const service = (name) => ({ group: [`**/${name}/*`], message: 'The ingress, the gateway and the admin service never import each other; what they share is in services/core/.' });
/** The gateway's rooms, in the one direction data flows: stream <- delivery <- resume, ownership apart, the gateway's own files above them all. */
const room = (name) => ({ group: [`../${name}/*`], message: `The gateway's rooms import one way (docs/ARCHITECTURE.md "The gateway's rooms"): not ${name}/ from here.` });
const GATEWAY_TOP = { group: ['../*.js'], message: "A room of the gateway does not import the gateway's own files (gateway.ts and its wiring)." };

function importBoundaries() {
  const restrict = (files, patterns) => ({ files, rules: { 'no-restricted-imports': ['error', { patterns }] } });
  const g = 'services/gateway';
  return [
    restrict(['services/**/*.ts', 'schemas/**/*.ts'], [SHIPPED_ONLY, OWNERSHIP_DOOR]),
    restrict(['bench/**/*.ts', 'tools/**/*.ts', 'scripts/**/*.ts'], [OWNERSHIP_DOOR]),
    restrict(['services/ingress/**/*.ts'], [SHIPPED_ONLY, OWNERSHIP_DOOR, service('gateway'), service('admin')]),
    restrict(['services/admin/**/*.ts'], [SHIPPED_ONLY, OWNERSHIP_DOOR, service('gateway'), service('ingress')]),
    restrict([`${g}/**/*.ts`], [SHIPPED_ONLY, OWNERSHIP_DOOR, service('ingress'), service('admin')]),
    restrict([`${g}/stream/**/*.ts`], [SHIPPED_ONLY, service('ingress'), service('admin'), room('delivery'), room('resume'), room('ownership'), GATEWAY_TOP]),
    restrict([`${g}/delivery/**/*.ts`], [SHIPPED_ONLY, service('ingress'), service('admin'), room('resume'), room('ownership'), GATEWAY_TOP]),
    restrict([`${g}/resume/**/*.ts`], [SHIPPED_ONLY, service('ingress'), service('admin'), room('ownership'), GATEWAY_TOP]),
    restrict([`${g}/ownership/**/*.ts`], [SHIPPED_ONLY, service('ingress'), service('admin'), room('stream'), room('delivery'), room('resume'), GATEWAY_TOP]),
  ];
}

export default tseslint.config(
  { ignores: ['dist/**', 'clients/typescript/dist/**', 'node_modules/**', '.data/**', 'coverage/**', 'bench/results/**', '.mesh/**'] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: { allowDefaultProject: ['*.js', 'bin/*.js'] }, tsconfigRootDir: import.meta.dirname } },
  },
  {
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      // An async function without await is how fastify hooks and commander actions say "returns a
      // promise"; the type-checked rules that matter (floating and misused promises) stay on.
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/ban-ts-comment': ['error', { 'ts-ignore': true, 'ts-expect-error': 'allow-with-description' }],
      '@typescript-eslint/consistent-type-imports': ['error', { prefer: 'type-imports', fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
    },
  },
  {
    // The client library runs on Node 20+, Bun and anything with a streaming fetch: no Node modules.
    files: ['clients/typescript/src/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['node:*'], message: 'The client library uses web APIs only (fetch, streams, crypto.randomUUID).' }] }],
    },
  },
  {
    // nats.js ends its reading of the socket when a subscription's callback throws (core/guarded-callback.ts).
    files: ['services/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.property.name='subscribe'] > ObjectExpression > Property[key.name='callback'] > :matches(ArrowFunctionExpression, FunctionExpression)",
          message: 'A subscription callback goes through guarded() (services/core/guarded-callback.ts): one that throws leaves the connection deaf.',
        },
      ],
    },
  },
  // Import boundaries. ESLint keeps one set of options per rule for a file (a later block replaces
  // an earlier one), so each block below lists every pattern that holds for its files.
  ...importBoundaries(),
  {
    // vitest's asymmetric matchers (expect.any, expect.stringMatching) are typed `any` by design.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-unsafe-assignment': 'off' },
  },
  {
    // Plain JavaScript (this file, bin/relay.js) has no types to check against.
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);
