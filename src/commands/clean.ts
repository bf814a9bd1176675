import { Flags } from '@oclif/core';
import { CliCommand } from '../util/cli-command.js';
import { cleanDocker, type CleanResult } from '../runtime/docker/docker-clean.js';
import { cleanSwarm, type SwarmCleanResult } from '../runtime/swarm/swarm-clean.js';

export default class Clean extends CliCommand {
  static override description =
    'Remove every Docker container and network (and swarm service, config and volume) carrying pole-bench labels (what crashed or interrupted runs left)';

  static override enableJsonFlag = true;

  static override flags = {
    'orphans-only': Flags.boolean({ description: 'only what no running pole-bench process owns' }),
  };

  async run(): Promise<CleanResult & { swarm: SwarmCleanResult }> {
    const { flags } = await this.parse(Clean);
    let r: CleanResult;
    let swarm: SwarmCleanResult;
    try {
      // The swarm runtime's services first: their tasks are containers of this daemon too.
      swarm = await cleanSwarm({ orphansOnly: flags['orphans-only'] });
      r = await cleanDocker({ orphansOnly: flags['orphans-only'] });
    } catch (err) {
      this.error(`cannot reach the Docker daemon: ${(err as Error).message}`, { exit: 3 });
    }
    if (!this.jsonEnabled()) {
      const s = swarm;
      const n = s.services.length + s.networks.length + s.configs.length + s.volumes.length;
      if (r.containers.length + r.networks.length + n === 0) this.log('nothing to remove');
      for (const x of s.services) this.log(`removed service ${x}`);
      for (const x of s.networks) this.log(`removed network ${x}`);
      for (const x of s.configs) this.log(`removed config ${x}`);
      for (const x of s.volumes) this.log(`removed volume ${x}`);
      for (const c of r.containers) this.log(`removed container ${c}`);
      for (const x of r.networks) this.log(`removed network ${x}`);
    }
    return { ...r, swarm };
  }
}
