// `pole-bench run --dry-run`: every container and tc command a docker run would use, as the
// equivalent docker CLI lines, without touching Docker or the kernel. Addresses are the ones the
// runtime would ask for first (its subnet moves on only if Docker reports an overlap).
import { planNetem, renderPlan } from '../../shaping/netem/netem-plan.js';
import type { Topology } from '../../topology/topology.js';
import { DockerRuntime } from './docker-runtime.js';
import { pairAddressPlan } from './bridge-addresses.js';
import { targetNamed } from '../../targets/registry.js';
import { targetImageTag } from '../../image/target-images.js';
import type { ShapingChoice } from '../../vocabulary/names.js';

export function dockerDryRun(
  t: Topology,
  o: { seed: number; image: string; shaping: ShapingChoice; version: string },
): string {
  const rt = new DockerRuntime(t, {
    shaping: o.shaping,
    seed: o.seed,
    image: o.image,
    target: targetNamed(t.target),
  });
  const x = o.seed % 250;
  const subnet = `10.231.${x}.0/24`;
  const addresses = rt.addressesIn(subnet);
  const net = rt.networkName;
  const label = `--label pole-bench=true --label pole-bench.run=${rt.runId}`;
  const lines: string[] = [
    `# ${t.name}: runtime docker, shaping ${o.shaping.kind} (${o.shaping.reason})`,
    `docker network create --driver bridge --subnet ${subnet} --ip-range 10.231.${x}.0/25 --gateway 10.231.${x}.1 ${label} ${net}`,
  ];
  for (const n of t.nodes) {
    lines.push(
      `docker run -d --name ${net}-${n.id}-net --network ${net} --ip ${addresses.get(n.id)} --cap-add NET_ADMIN ${label} --label pole-bench.role=holder --entrypoint node ${o.image} -e '<sleep until SIGTERM>'`,
    );
  }
  if (o.shaping.kind === 'netem') {
    lines.push('# tc in each holder (docker exec <holder> ...):');
    lines.push(renderPlan(planNetem(t, addresses)));
  } else if (o.shaping.kind === 'relay' && t.target !== 'pole') {
    const pairs = pairAddressPlan(t, subnet).all();
    lines.push(
      `# relay on the host: one address per ordered pair of members in different data centers, added to the run's bridge (ip address add 10.231.${x}.N/32 dev br-<network id>): ${pairs[0] ?? 'none'} … ${pairs.at(-1) ?? ''}; the target's own port numbers on each; no tc commands`,
    );
  } else if (o.shaping.kind === 'relay') {
    lines.push(
      `# relay on the host at 10.231.${x}.1: one route per pair of nodes in different data centers; no tc commands`,
    );
  }
  for (const n of t.nodes) {
    const member =
      t.target === 'zookeeper'
        ? `${targetImageTag('zookeeper', o.version)} sh -c '<myid into /data> exec java … QuorumPeerMain /config/${n.id}.cfg'`
        : t.target === 'etcd'
          ? `${targetImageTag('etcd', o.version)} sh -c '<hosts file into /etc/hosts> exec etcd --name=${n.id} --data-dir=/data …'`
          : `${o.image} node --config /config/${n.id}.json`;
    lines.push(
      `docker run -d --name ${net}-${n.id} --network container:${net}-${n.id}-net -v <config dir>:/config:ro ${label} --label pole-bench.role=node ${member}`,
    );
  }
  return lines.join('\n');
}
