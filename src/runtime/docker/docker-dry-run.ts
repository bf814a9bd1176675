// `pole-bench run --dry-run`: every container and tc command a docker run would use, as the
// equivalent docker CLI lines, without touching Docker or the kernel: the target's own member plan,
// as the docker runtime would place it, with each member's command line and the files it reads.
// Addresses are the ones the runtime would ask for first (its subnet moves on only if Docker
// reports an overlap); the relay's own ports, where the target leaves them to it, are picked at start.
import { planNetem, renderPlan } from '../../shaping/netem/netem-plan.js';
import type { Topology } from '../../topology/topology.js';
import { DockerRuntime, dockerPlacement, memberCommand } from './docker-runtime.js';
import { pairAddressPlan } from './bridge-addresses.js';
import { targetNamed } from '../../targets/registry.js';
import { targetImageTag } from '../../image/target-images.js';
import { shellWord, containerEnv } from '../container-command.js';
import type { NodeId, ShapingChoice } from '../../vocabulary/names.js';
import { directDial, type Dial } from '../../shaping/shaper.js';
import type { RelayedNode } from '../../shaping/shaper.js';

export async function dockerDryRun(
  t: Topology,
  o: {
    seed: number;
    image: string;
    shaping: ShapingChoice;
    version: string;
    oracle?: string;
    targetOption?: string;
  },
): Promise<string> {
  const target = targetNamed(t.target);
  const rt = new DockerRuntime(t, { shaping: o.shaping, seed: o.seed, image: o.image, target });
  const x = o.seed % 250;
  const subnet = `10.231.${x}.0/24`;
  const gateway = `10.231.${x}.1`;
  const addresses = rt.addressesIn(subnet);
  const pairs = pairAddressPlan(t, subnet);
  const net = rt.networkName;
  const label = `--label pole-bench=true --label pole-bench.run=${rt.runId}`;
  const lines: string[] = [
    `# ${t.name}: target ${t.target}, runtime docker, shaping ${o.shaping.kind} (${o.shaping.reason})`,
    `docker network create --driver bridge --subnet ${subnet} --ip-range 10.231.${x}.0/25 --gateway ${gateway} ${label} ${net}`,
  ];
  for (const n of t.nodes) {
    lines.push(
      `docker run -d --name ${net}-${n.id}-net --network ${net} --ip ${addresses.get(n.id)} --cap-add NET_ADMIN ${label} --label pole-bench.role=holder --entrypoint node ${o.image} -e '<sleep until SIGTERM>'`,
    );
  }
  let keepsPorts = false;
  const relayed = o.shaping.kind === 'relay';
  const dryShape = (members: readonly RelayedNode[], keepPorts: boolean): Dial => {
    keepsPorts = keepPorts;
    const direct = directDial(members);
    return (from: NodeId, to: NodeId, port = 'peer') => {
      const at = direct(from, to, port);
      if (!relayed || t.node(from).datacenter === t.node(to).datacenter) return at;
      return keepPorts ? { host: pairs.hostOf(from, to), port: at.port } : { host: gateway, port: 0 };
    };
  };
  const plan = await target.planMembers(
    dockerPlacement(t, {
      seed: o.seed,
      fsync: true,
      ...(o.oracle !== undefined ? { oracle: o.oracle } : {}),
      ...(o.targetOption !== undefined ? { targetOption: o.targetOption } : {}),
      kind: target.members,
      addresses,
      shape: (members, p) => Promise.resolve(dryShape(members, p.keepPorts)),
    }),
  );
  if (o.shaping.kind === 'netem') {
    lines.push('# tc in each holder (docker exec <holder> ...):');
    lines.push(renderPlan(planNetem(t, addresses)));
  } else if (relayed && keepsPorts) {
    const all = pairs.all();
    lines.push(
      `# relay on the host: one address per ordered pair of members in different data centers, added to the run's bridge (ip address add 10.231.${x}.N/32 dev br-<network id>): ${all[0] ?? 'none'} … ${all.at(-1) ?? ''}; the target's own port numbers on each; no tc commands`,
    );
  } else if (relayed) {
    lines.push(
      `# relay on the host at ${gateway}: one route per pair of members in different data centers, on ports it picks at start (port 0 in the files below); no tc commands`,
    );
  }
  lines.push(
    `# files in <config dir> (/config in every member, read-only): ${plan.files.map((f) => f.name).join(', ') || 'none'}`,
  );
  const image = target.members.image === 'node' ? o.image : targetImageTag(target.name, o.version);
  const order = plan.startOrder;
  lines.push(
    `# start order: ${order.first.join(' ')} together${order.then.length > 0 ? `, then ${order.then.join(' ')}${order.after ? ` once ${order.after} serves` : ''}` : ''}`,
  );
  for (const m of plan.members) {
    const env = containerEnv(m).map((e) => `-e ${shellWord(e)}`);
    lines.push(
      [
        `docker run -d --name ${net}-${m.id} --network container:${net}-${m.id}-net -v <config dir>:/config:ro --init`,
        ...env,
        label,
        `--label pole-bench.role=node --entrypoint '' ${image}`,
        ...memberCommand(m).map(shellWord),
      ].join(' '),
    );
  }
  return lines.join('\n');
}
