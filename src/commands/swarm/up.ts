// src/commands/swarm/: the `pole-bench swarm` topic: a local Docker Swarm of Docker-in-Docker hosts
// on this machine, to try and test the swarm runtime (the work is in src/runtime/swarm/local/).
//
// `pole-bench swarm up`: make the local swarm (or find it up), print how to reach its manager.
import { Flags } from '@oclif/core';
import { CliCommand } from '../../util/cli-command.js';
import { RunGuard } from '../../run/run-guard.js';
import { swarmUp, type SwarmUpResult } from '../../runtime/swarm/local/local-swarm.js';
import { SwarmError, SwarmInterrupted } from '../../runtime/swarm/local/swarm-error.js';
import { dcConstraint } from '../../runtime/swarm/local/swarm-labels.js';
import {
  planSwarm,
  swarmImageKinds,
  SwarmInputError,
  type SwarmPlan,
} from '../../runtime/swarm/local/swarm-plan.js';
import { loadTopology } from '../../topology/topology.js';
import { InputError } from '../../util/input-error.js';

/** The whole of `swarm up` (image build, hosts, swarm, image loads) may take this long. */
const DEADLINE_MS = 30 * 60_000;

export default class SwarmUp extends CliCommand {
  static override summary =
    'Start a local Docker Swarm: one Docker-in-Docker host per data center, labelled pole-bench.dc, with the images loaded.';

  static override description =
    "Builds (offline, from the project's Debian base) the DinD host image pole-bench-dind:<version>, starts the hosts " +
    "on a bridge network of their own, makes the first host the swarm's one manager and joins the others as workers, " +
    'labels each swarm node pole-bench.dc=<data center>, and docker-loads the images built on this ' +
    "machine into every host (one not built is skipped, saying so). Each host's engine is reached through a unix " +
    "socket in the state folder (~/.local/state/pole-bench/swarm, or $POLE_SWARM_STATE); the manager's is printed as " +
    'DOCKER_HOST and written to swarm.json there. Run again, it keeps a whole swarm of the same shape (refreshing its ' +
    'images) and replaces a broken one. Exit 2: bad flags or a swarm of another shape is up; 3: Docker or the swarm failed.';

  static override enableJsonFlag = true;

  static override examples = [
    '<%= config.bin %> swarm up',
    '<%= config.bin %> swarm up --nodes 2',
    '<%= config.bin %> swarm up --dcs slac,fnal,caltech',
    '<%= config.bin %> swarm up --topology topologies/paper-3dc-partition.yaml --images node',
  ];

  static override flags = {
    nodes: Flags.integer({
      description: 'hosts to start (default: one per data center, 3 when no data centers are named)',
      min: 1,
    }),
    dcs: Flags.string({
      description: 'data center names, comma-separated, one per host in turn (default d1,d2,…,dN)',
      exclusive: ['topology'],
    }),
    topology: Flags.string({
      description: "take the data center names from this topology file's datacenters",
      exclusive: ['dcs'],
    }),
    images: Flags.string({
      description: `images to load into the hosts: ${swarmImageKinds().join(', ')} (comma-separated), or none`,
      default: swarmImageKinds().join(','),
    }),
    'mono-shift': Flags.string({
      description:
        "start a data center's hosts with their containers' monotonic and boot-time clocks this many seconds " +
        "ahead (dc=seconds, comma-separated; a time namespace): hosts booted at other times, to test the run's " +
        'clock corrections. The wall clock is one per kernel: it cannot be shifted for a host here',
    }),
    replace: Flags.boolean({
      description: 'replace a local swarm that is up, whatever its shape',
      default: false,
    }),
  };

  async run(): Promise<SwarmUpResult> {
    const { flags } = await this.parse(SwarmUp);
    const progress = (line: string): void => {
      if (this.jsonEnabled()) process.stderr.write(`${line}\n`);
      else this.log(line);
    };
    let plan: SwarmPlan;
    try {
      plan = planSwarm({
        ...(flags.nodes !== undefined ? { nodes: flags.nodes } : {}),
        ...(flags.dcs !== undefined ? { dcs: flags.dcs } : {}),
        ...(flags.topology !== undefined
          ? { topologyDcs: loadTopology(flags.topology).datacenters.map((d) => d.name) }
          : {}),
        images: flags.images,
        ...(flags['mono-shift'] !== undefined ? { monoShift: flags['mono-shift'] } : {}),
      });
    } catch (err) {
      if (err instanceof SwarmInputError || err instanceof InputError) this.error(err.message, { exit: 2 });
      throw err;
    }
    const guard = new RunGuard({ deadlineMs: DEADLINE_MS }).start();
    let r: SwarmUpResult;
    try {
      r = await swarmUp({
        plan,
        shapeGiven:
          flags.nodes !== undefined ||
          flags.dcs !== undefined ||
          flags.topology !== undefined ||
          flags['mono-shift'] !== undefined,
        replace: flags.replace,
        progress,
        signal: guard.signal,
      });
    } catch (err) {
      if (err instanceof SwarmInterrupted)
        this.error(`swarm up ${err.message}: removed what it made`, { exit: 130 });
      if (err instanceof SwarmError) {
        if (err.tail.length > 0) process.stderr.write(err.tail.map((l) => `  | ${l}\n`).join(''));
        this.error(err.message, { exit: err.exitCode });
      }
      if (err instanceof SwarmInputError || err instanceof InputError) this.error(err.message, { exit: 2 });
      throw err;
    } finally {
      guard.stop();
    }
    if (!this.jsonEnabled()) this.log(formatUp(r));
    return r;
  }
}

function formatUp(r: SwarmUpResult): string {
  const s = r.state;
  const lines = [
    `${r.status === 'already-up' ? 'already up' : r.status === 'replaced' ? `replaced (${r.replacedBecause ?? ''})` : 'up'}: ` +
      `${s.hosts.length} host${s.hosts.length === 1 ? '' : 's'} in ${(r.totalMs / 1000).toFixed(1)} s ` +
      `(${r.phases.map((p) => `${p.name} ${(p.ms / 1000).toFixed(1)} s`).join(', ')})`,
    ...s.hosts.map(
      (h) =>
        `  ${h.name}  ${h.role.padEnd(7)}  ${h.dc.padEnd(8)}  ${h.address}  node ${h.nodeId.slice(0, 12)}`,
    ),
  ];
  for (const i of s.images) {
    const into = r.loaded.filter((l) => l.tags.includes(i.tag)).map((l) => l.host);
    lines.push(
      `image ${i.tag} (${i.id.slice(7, 19)}): ${into.length > 0 ? `loaded into ${into.join(', ')}` : 'already in every host'}`,
    );
  }
  for (const k of r.skippedImages) lines.push(`image ${k.tag}: not loaded: ${k.reason}`);
  const dc = s.hosts[s.hosts.length - 1]!.dc;
  lines.push(
    '',
    "reach the swarm's manager (unix socket, this user only):",
    `  export DOCKER_HOST=${r.dockerHost}`,
    '  docker node ls',
    `  docker service create --constraint '${dcConstraint(dc)}' …   # a service in data center ${dc}`,
    `state: ${r.stateFile}`,
    'remove it all: pole-bench swarm down',
  );
  return lines.join('\n');
}
