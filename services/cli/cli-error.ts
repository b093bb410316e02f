// A command's failure as the operator sees it: one sentence and an exit code (1 a failure, 2 bad
// arguments, 3 not found). Its own file so every command can throw it without loading the mesh's code.
export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}
