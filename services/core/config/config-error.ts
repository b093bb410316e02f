// A configuration that cannot start a service, every problem listed. Its own file so what only
// catches it (the CLI) does not load the schemas and their validator.
export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}
