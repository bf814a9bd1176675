// `pole-bench model TOPOLOGY`: what the topology predicts before anything runs: every candidate
// leader's scores and per-data-center latency, and whom each oracle would elect.
import { Args, Flags } from '@oclif/core';
import { CliCommand } from '../util/cli-command.js';
import { OracleSpecError } from '../node/core/oracles/registry.js';
import { modelSummary, type ModelSummary } from '../topology/model.js';
import { formatModelSummary } from '../topology/model-text.js';
import { loadTopology } from '../topology/topology.js';
import { InputError } from '../util/input-error.js';

export default class Model extends CliCommand {
  static override summary = 'Predict scores, per-data-center latency and elected leaders from a topology.';

  static override description =
    'For the initial leader, and for every candidate after the initial leader is killed: θc, θl, θw, θr and the ' +
    'predicted mean write latency per data center (RTT to the leader plus its consensus latency); then which ' +
    'server each oracle would elect.';

  static override enableJsonFlag = true;

  static override examples = [
    '<%= config.bin %> model topologies/paper-3dc-deployment-1.yaml',
    '<%= config.bin %> model topologies/paper-2dc.yaml --oracle latency:10ms,history --json',
  ];

  static override args = {
    topology: Args.string({ description: 'topology file (YAML or JSON)', required: true }),
  };

  static override flags = {
    oracle: Flags.string({ description: "oracle spec to use instead of the topology's own" }),
  };

  async run(): Promise<ModelSummary> {
    const { args, flags } = await this.parse(Model);
    let summary: ModelSummary;
    try {
      summary = modelSummary(loadTopology(args.topology), flags.oracle);
    } catch (err) {
      if (err instanceof InputError) this.error(err.message, { exit: err.exitCode });
      if (err instanceof OracleSpecError) this.error(`--oracle: ${err.message}`, { exit: 2 });
      throw err;
    }
    if (!this.jsonEnabled()) this.log(formatModelSummary(summary));
    return summary;
  }
}
