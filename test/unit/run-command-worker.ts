// Runs one CLI command with @oclif/test's runCommand inside a worker thread and posts back what it
// printed. runCommand captures output by replacing process.stdout.write; in the test process that
// would also swallow node:test's own reports (which go to stdout), so the capture lives here, where
// process.stdout is the worker's own stream.
import { readFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { Config } from '@oclif/core';
import { runCommand } from '@oclif/test';

export interface CommandRunInput {
  /** The package root (where package.json is). */
  readonly root: string;
  /** oclif.commands to use instead of package.json's, relative to root (the build under test). */
  readonly commands: string;
  readonly argv: readonly string[];
}

export interface CommandRunResult {
  readonly stdout: string;
  readonly stderr: string;
  readonly error?: { readonly message: string; readonly exit?: number };
}

const input = workerData as CommandRunInput;
const pjson = JSON.parse(readFileSync(`${input.root}/package.json`, 'utf8')) as {
  oclif: { commands: string };
};
pjson.oclif.commands = input.commands;
const config = await Config.load({ root: input.root, pjson } as Parameters<typeof Config.load>[0]);
const run = await runCommand<unknown>([...input.argv], config);
const exit = (run.error as { oclif?: { exit?: number } } | undefined)?.oclif?.exit;
const result: CommandRunResult = {
  stdout: run.stdout,
  stderr: run.stderr,
  ...(run.error ? { error: { message: run.error.message, ...(exit !== undefined ? { exit } : {}) } } : {}),
};
parentPort?.postMessage(result);
