// Lint: typescript-eslint's type-checked recommended rules (a promise nobody awaits or handles is an
// error), with the project's own: no `any`, no ts-ignore, `import type` for types.
import tseslint from 'typescript-eslint';

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
    // What `npm run build` ships (services/, schemas/) never reaches into the development tools,
    // tests, benchmarks or scripts: tsc would compile whatever it imports into dist/.
    files: ['services/**/*.ts', 'schemas/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/tools/*', '**/test/*', '**/bench/*', '**/scripts/*'], message: 'The build ships services/ and schemas/ only; development launchers and helpers live in tools/.' }] },
      ],
    },
  },
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
