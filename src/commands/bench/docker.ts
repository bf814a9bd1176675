import { Flags } from '@oclif/core';
import { CliCommand } from '../../util/cli-command.js';
import { benchedRuntimes, runDockerBench } from '../../bench/docker-bench.js';
import type { RuntimeName } from '../../vocabulary/runtimes.js';

export default class BenchDocker extends CliCommand {
  static override description =
    'Measure a container runtime: bring-up until a leader serves, and tear-down, with the node image already built';

  static override enableJsonFlag = true;

  static override flags = {
    topology: Flags.string({
      description: 'topology file',
      default: 'topologies/paper-3dc-deployment-1.yaml',
    }),
    runs: Flags.integer({ description: 'repetitions', default: 3, min: 1 }),
    runtime: Flags.string({
      description: 'the container runtime measured (run --help says what each is)',
      options: benchedRuntimes(),
      default: 'docker',
    }),
  };

  async run(): Promise<Awaited<ReturnType<typeof runDockerBench>>> {
    const { flags } = await this.parse(BenchDocker);
    try {
      return await runDockerBench({
        topology: flags.topology,
        runs: flags.runs,
        runtime: flags.runtime as RuntimeName,
        log: (l) => {
          if (!this.jsonEnabled()) this.log(l);
        },
      });
    } catch (err) {
      this.error((err as Error).message, { exit: 3 });
    }
  }
}
