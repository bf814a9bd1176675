import { Command, Flags } from '@oclif/core';
import { runDockerBench } from '../../bench/docker-bench.js';

export default class BenchDocker extends Command {
  static override description =
    'Measure the docker runtime: bring-up until a leader serves, and tear-down, with the node image already built';

  static override enableJsonFlag = true;

  static override flags = {
    topology: Flags.string({
      description: 'topology file',
      default: 'topologies/paper-3dc-deployment-1.yaml',
    }),
    runs: Flags.integer({ description: 'repetitions', default: 3, min: 1 }),
  };

  async run(): Promise<Awaited<ReturnType<typeof runDockerBench>>> {
    const { flags } = await this.parse(BenchDocker);
    try {
      return await runDockerBench({
        topology: flags.topology,
        runs: flags.runs,
        log: (l) => {
          if (!this.jsonEnabled()) this.log(l);
        },
      });
    } catch (err) {
      this.error((err as Error).message, { exit: 3 });
    }
  }
}
