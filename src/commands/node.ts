// `pole-bench node --config FILE`: run one POLE node, the system under test. Started by the
// runtimes for every node of a run; events go to stdout as JSON lines, diagnostics to stderr.
import { Flags } from '@oclif/core';
import { CliCommand } from '../util/cli-command.js';
import { loadNodeConfig } from '../node/config.js';
import type { NodeConfig } from '../node/config.js';
import { runNode } from '../node/server.js';
import { InputError } from '../util/input-error.js';

export default class NodeCommand extends CliCommand {
  static override summary = 'Run one POLE node (the system under test) from a config file.';

  static override description =
    'Events are written to stdout, one JSON object per line; GET /status and /metrics are served on listen.httpPort. ' +
    'Usually started by `pole-bench run`, which writes the config files.';

  static override examples = ['<%= config.bin %> node --config nodes/p3.yaml'];

  static override flags = {
    // Not `exists: true`: oclif would exit 1 for a missing file; loadNodeConfig reports it as bad input (2).
    config: Flags.file({ char: 'c', summary: 'Node config file (YAML or JSON).', required: true }),
    'stop-with-stdin': Flags.boolean({
      summary: 'Also stop when stdin closes (harnesses use it so their nodes never outlive them).',
      hidden: true,
    }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(NodeCommand);
    let config: NodeConfig;
    try {
      config = loadNodeConfig(flags.config);
    } catch (err) {
      if (err instanceof InputError) this.error(err.message, { exit: err.exitCode });
      throw err;
    }
    await runNode(config, { stopWithStdin: flags['stop-with-stdin'] });
  }
}
