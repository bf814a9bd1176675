import { Flags } from '@oclif/core';
import { CliCommand } from '../util/cli-command.js';
import { runtimeKinds } from '../runtime/registry.js';
import type { RuntimeName } from '../vocabulary/runtimes.js';

export default class Clean extends CliCommand {
  static override description =
    "Remove what runs left on the Docker daemon DOCKER_HOST names, found by pole-bench's labels: each runtime's leftovers (containers, networks, and what else it makes), all of them or only those no live run owns";

  static override enableJsonFlag = true;

  static override flags = {
    'orphans-only': Flags.boolean({ description: 'only what no running pole-bench process owns' }),
  };

  async run(): Promise<Partial<Record<RuntimeName, readonly string[]>>> {
    const { flags } = await this.parse(Clean);
    const removed: Partial<Record<RuntimeName, readonly string[]>> = {};
    // A runtime whose leftovers hold others' first (runtime-kind.ts reapFirst).
    const kinds = [...runtimeKinds()].sort(
      (a, b) => Number(b.reapFirst ?? false) - Number(a.reapFirst ?? false),
    );
    try {
      for (const k of kinds)
        if (k.reap) removed[k.name] = await k.reap({ orphansOnly: flags['orphans-only'] });
    } catch (err) {
      this.error(`cannot reach the Docker daemon: ${(err as Error).message}`, { exit: 3 });
    }
    if (!this.jsonEnabled()) {
      const lines = Object.values(removed).flat();
      if (lines.length === 0) this.log('nothing to remove');
      for (const l of lines) this.log(`removed ${l}`);
    }
    return removed;
  }
}
