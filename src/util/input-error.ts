// src/util/: small helpers with no folder of their own: errors in what the user gave (file:line:col),
// validated YAML loading, duration flags, free ports, a seeded PRNG, ending worker threads.
//
// A problem with something the user gave us (a config or topology file, a flag value). It carries
// where the problem is, so the message reads like a compiler's:
//   topology.yaml:12:5: cluster.timers.tickMs: expected a positive number
// and the exit code the CLI uses for bad input (2, see docs: exit codes).

export interface InputErrorInit {
  /** The file as the user named it (kept relative when it was given relative). */
  readonly file: string;
  /** 1-based line of the offending node, when known. */
  readonly line?: number;
  /** 1-based column of the offending node, when known. */
  readonly column?: number;
  /** Dotted field path, e.g. `peers[2].id`; empty when the problem is the file as a whole. */
  readonly field?: string;
  /** What is wrong, without the location prefix. */
  readonly problem: string;
}

export class InputError extends Error {
  override readonly name = 'InputError';
  readonly file: string;
  readonly line?: number;
  readonly column?: number;
  readonly field: string;
  readonly problem: string;
  readonly exitCode = 2;

  constructor(init: InputErrorInit) {
    super(formatInputError(init));
    this.file = init.file;
    if (init.line !== undefined) this.line = init.line;
    if (init.column !== undefined) this.column = init.column;
    this.field = init.field ?? '';
    this.problem = init.problem;
  }
}

function formatInputError(init: InputErrorInit): string {
  let where = init.file;
  if (init.line !== undefined) {
    where += `:${init.line}`;
    if (init.column !== undefined) where += `:${init.column}`;
  }
  const field = init.field ? `${init.field}: ` : '';
  return `${where}: ${field}${init.problem}`;
}
