// The netem plan's htb tree and u32 filters, applied for real inside holder containers with a
// pfifo leaf in place of netem (this kernel has none), read back with `tc -s`: each peer's packets
// must land in its data center's class. The traffic is the nodes' own (heartbeats, replication).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { parseClassStats } from '../../src/shaping/netem/apply-plan.js';
import { planNetem, remoteClassId } from '../../src/shaping/netem/netem-plan.js';
import { DockerRuntime } from '../../src/runtime/docker/docker-runtime.js';
import { loadTopology } from '../../src/topology/topology.js';
import { dockerSkipReason, nodeImage } from './docker-env.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

test('the htb tree and filters in a holder send each peer to its data center class (pfifo leaf)', async (t) => {
  const skip = await dockerSkipReason();
  if (skip) return t.skip(skip);
  const topology = loadTopology(join(ROOT, 'topologies', 'paper-3dc-deployment-1.yaml'));
  const rt = new DockerRuntime(topology, {
    shaping: { kind: 'netem', reason: 'test: the plan with pfifo leaves' },
    seed: 77,
    image: await nodeImage(),
    tcPlan: (addresses) => planNetem(topology, addresses, { leaf: 'pfifo' }),
  });
  try {
    await rt.start();
    await rt.waitFor((e) => e.ev === 'serving' && e.leader === undefined, 30_000);
    // Heartbeats every 250 ms to every peer: a few seconds give every class packets.
    await new Promise((r) => setTimeout(r, 3000));
    const stats = parseClassStats(await rt.execInHolder('p4', ['tc', '-s', 'class', 'show', 'dev', 'eth0']));
    const qdiscs = await rt.execInHolder('p4', ['tc', 'qdisc', 'show', 'dev', 'eth0']);
    assert.match(qdiscs, /qdisc htb 1: root/);
    assert.match(qdiscs, /qdisc pfifo 11: parent 1:11/);
    // p4 is in caltech (index 0): slac {p2, p3} is data center 1, fnal {p1} is 2.
    const slac = stats.get(remoteClassId(1));
    const fnal = stats.get(remoteClassId(2));
    const local = stats.get('1:1');
    t.diagnostic(`p4 classes: ${JSON.stringify(Object.fromEntries(stats))}`);
    assert.ok((slac?.packets ?? 0) > 0, 'packets to slac in 1:11');
    assert.ok((fnal?.packets ?? 0) > 0, 'packets to fnal in 1:12');
    assert.ok((local?.packets ?? 0) > 0, 'packets to p5 (same data center) in the default class');
    const filters = await rt.execInHolder('p4', ['tc', 'filter', 'show', 'dev', 'eth0']);
    for (const peer of ['p1', 'p2', 'p3']) {
      const ip = rt.clientAddress(peer).host;
      const hex = ip
        .split('.')
        .map((o) => Number(o).toString(16).padStart(2, '0'))
        .join('');
      assert.ok(filters.includes(hex), `a filter for ${peer} (${ip})`);
    }
  } finally {
    await rt.teardown();
  }
});
