// src/commands/topology/: the `pole-bench topology` topic: checking a topology file and showing what it
// describes (the file itself is src/topology/'s).
//
// `pole-bench topology validate FILE`: check a topology file and show what it describes.
import { Args } from '@oclif/core';
import { CliCommand } from '../../util/cli-command.js';
import { formatTopologySummary, summarizeTopology, type TopologySummary } from '../../topology/summary.js';
import { loadTopology } from '../../topology/topology.js';
import { InputError } from '../../util/input-error.js';

export default class TopologyValidate extends CliCommand {
  static override summary = 'Check a topology file and summarise it: data centers, nodes, RTTs, rates.';

  static override description = 'Problems are reported as FILE:LINE:COLUMN: FIELD: PROBLEM with exit code 2.';

  static override enableJsonFlag = true;

  static override examples = ['<%= config.bin %> topology validate topologies/paper-2dc.yaml'];

  static override args = {
    // Not Args.file({ exists: true }): oclif would exit 1 for a missing file; loadTopology says 2.
    file: Args.string({ description: 'topology file (YAML or JSON)', required: true }),
  };

  async run(): Promise<TopologySummary> {
    const { args } = await this.parse(TopologyValidate);
    let summary: TopologySummary;
    try {
      summary = summarizeTopology(loadTopology(args.file));
    } catch (err) {
      if (err instanceof InputError) this.error(err.message, { exit: err.exitCode });
      throw err;
    }
    if (!this.jsonEnabled()) this.log(formatTopologySummary(summary));
    return summary;
  }
}
