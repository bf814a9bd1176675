// `pole-bench swarm down`: remove the local swarm (its hosts, their network, the state folder).
import { CliCommand } from '../../util/cli-command.js';
import { swarmDown, type SwarmDownResult } from '../../runtime/swarm/local/local-swarm.js';
import { SwarmError } from '../../runtime/swarm/local/swarm-error.js';

export default class SwarmDown extends CliCommand {
  static override summary =
    'Remove the local Docker Swarm that swarm up made: its hosts, their network and its state.';

  static override description =
    'Finds everything by its labels (not only through the state file), so it also removes what an interrupted or ' +
    "crashed swarm up left. The containers inside each host are killed, then each host's engine is stopped (20 s " +
    'at most, so it removes their cgroups) and the host removed. Nothing there: nothing ' +
    'to do, exit 0. Exit 3: no Docker daemon answers, or something could not be removed.';

  static override enableJsonFlag = true;

  static override examples = ['<%= config.bin %> swarm down'];

  async run(): Promise<SwarmDownResult> {
    await this.parse(SwarmDown);
    const progress = (line: string): void => {
      if (this.jsonEnabled()) process.stderr.write(`${line}\n`);
      else this.log(line);
    };
    let r: SwarmDownResult;
    try {
      r = await swarmDown({ progress });
    } catch (err) {
      if (err instanceof SwarmError) this.error(err.message, { exit: err.exitCode });
      throw err;
    }
    if (!this.jsonEnabled()) {
      const secs = `${(r.ms / 1000).toFixed(1)} s`;
      if (r.nothing) this.log(`no local swarm: nothing to remove (${secs})`);
      else {
        const x = r.removed;
        if (x.hosts.length > 0) this.log(`removed hosts ${x.hosts.join(', ')}`);
        if (x.networks.length > 0) this.log(`removed network ${x.networks.join(', ')}`);
        if (x.volumes.length > 0) this.log(`removed volumes ${x.volumes.join(', ')}`);
        if (x.stateDir) this.log(`removed the state in ${r.stateDir}`);
        this.log(`down in ${secs}`);
      }
    }
    return r;
  }
}
