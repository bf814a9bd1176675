import { Command, Flags } from '@oclif/core';
import { cleanDocker, type CleanResult } from '../runtime/docker/docker-clean.js';

export default class Clean extends Command {
  static override description =
    'Remove every Docker container and network carrying pole-bench labels (what crashed or interrupted runs left)';

  static override enableJsonFlag = true;

  static override flags = {
    'orphans-only': Flags.boolean({ description: 'only what no running pole-bench process owns' }),
  };

  async run(): Promise<CleanResult> {
    const { flags } = await this.parse(Clean);
    let r: CleanResult;
    try {
      r = await cleanDocker({ orphansOnly: flags['orphans-only'] });
    } catch (err) {
      this.error(`cannot reach the Docker daemon: ${(err as Error).message}`, { exit: 3 });
    }
    if (!this.jsonEnabled()) {
      if (r.containers.length + r.networks.length === 0) this.log('nothing to remove');
      for (const c of r.containers) this.log(`removed container ${c}`);
      for (const n of r.networks) this.log(`removed network ${n}`);
    }
    return r;
  }
}
