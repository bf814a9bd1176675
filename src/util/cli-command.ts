// The base of every `pole-bench` command: oclif's own, with one fix. With --json, oclif's catch sets
// the exit code from `err.exitCode`, which its own errors (this.error(…, { exit: 2 })) never carry:
// they keep it in `err.oclif.exit`, so bad input left with 1, the code of a failed threshold. Here
// the code an error was raised with is the code the process exits with, with --json or without.
import { Command } from '@oclif/core';

export abstract class CliCommand extends Command {
  protected override async catch(
    err: Error & { exitCode?: number; oclif?: { exit?: number } },
  ): Promise<unknown> {
    const exit = err.oclif?.exit;
    if (process.exitCode === undefined && err.exitCode === undefined && typeof exit === 'number')
      process.exitCode = exit;
    return super.catch(err);
  }
}
