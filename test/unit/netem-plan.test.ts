// The netem plan: the exact tc commands per node for the paper's deployment 1, the structure of the
// tree for every node (one class per remote data center, one filter per remote peer, none for peers
// in the same data center), jitter 0, asymmetric delays, the pfifo leaf, rendering, and parsing of
// `tc -s class show` output.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { applyPlan, parseClassStats } from '../../src/shaping/netem/apply-plan.js';
import { planCut, planNetem, remoteClassId, renderPlan } from '../../src/shaping/netem/netem-plan.js';
import { loadTopology, parseTopology, type Topology } from '../../src/topology/topology.js';

function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'topologies', 'paper-3dc-deployment-1.yaml'))) {
    const up = dirname(dir);
    assert.notEqual(up, dir, 'no topologies/ above the test file');
    dir = up;
  }
  return dir;
}

const deployment1 = loadTopology(join(repoRoot(), 'topologies', 'paper-3dc-deployment-1.yaml'));

/** 10.231.<data center index + 1>.<sid>: the address says where a node is. */
function addressesOf(t: Topology): Map<string, string> {
  return new Map(
    t.nodes.map((n) => [
      n.id,
      `10.231.${t.datacenters.findIndex((d) => d.name === n.datacenter) + 1}.${n.sid}`,
    ]),
  );
}

const line = (s: string): string[] => s.split(' ');
const HTB_1G = 'htb rate 1000mbit ceil 1000mbit burst 125000 cburst 125000 quantum 1514';
const ROOT = [
  line('tc qdisc replace dev eth0 root handle 1: htb default 1'),
  line(
    'tc class replace dev eth0 parent 1: classid 1:1 htb rate 10000mbit ceil 10000mbit burst 1250000 cburst 1250000 quantum 1514',
  ),
];

function commandsOf(plan: Map<string, string[][]>, node: string): string[][] {
  const cmds = plan.get(node);
  assert.ok(cmds !== undefined, `no commands for ${node}`);
  return cmds;
}

/** Filters of a node's commands as dst address → flowid. */
function filtersOf(cmds: string[][]): Map<string, string> {
  const m = new Map<string, string>();
  for (const c of cmds.filter((c) => c[1] === 'filter')) {
    const dst = c[c.indexOf('dst') + 1];
    const flowid = c[c.indexOf('flowid') + 1];
    assert.ok(dst !== undefined && flowid !== undefined, c.join(' '));
    assert.ok(!m.has(dst), `two filters for ${dst}`);
    m.set(dst, flowid);
  }
  return m;
}

describe('planNetem on paper-3dc-deployment-1', () => {
  const addresses = addressesOf(deployment1);
  const plan = planNetem(deployment1, addresses);

  it('gives p4 (caltech) exactly these commands', () => {
    // caltech is data center 0, slac 1 (4.94 ms each way), fnal 2 (38.53 ms); jitter 2 %, pareto.
    // limit = 2 × 1 Gbit/s × (delay + jitter) / 1500 B, at least 1000.
    assert.deepEqual(commandsOf(plan, 'p4'), [
      ...ROOT,
      line(`tc class replace dev eth0 parent 1: classid 1:11 ${HTB_1G}`),
      line(
        'tc qdisc replace dev eth0 parent 1:11 handle 11: netem delay 4.940ms 0.099ms distribution pareto limit 1000 rate 1000mbit',
      ),
      line(`tc class replace dev eth0 parent 1: classid 1:12 ${HTB_1G}`),
      line(
        'tc qdisc replace dev eth0 parent 1:12 handle 12: netem delay 38.530ms 0.771ms distribution pareto limit 6551 rate 1000mbit',
      ),
      line(
        'tc filter replace dev eth0 parent 1: protocol ip prio 1 handle 800::1 u32 match ip dst 10.231.2.2/32 flowid 1:11',
      ),
      line(
        'tc filter replace dev eth0 parent 1: protocol ip prio 1 handle 800::2 u32 match ip dst 10.231.2.3/32 flowid 1:11',
      ),
      line(
        'tc filter replace dev eth0 parent 1: protocol ip prio 1 handle 800::3 u32 match ip dst 10.231.3.1/32 flowid 1:12',
      ),
    ]);
  });

  it("cuts p4's egress to a peer abroad and one at home by filters to the dropping class, and heals them", () => {
    // Topology order: p1 (fnal) is node 0, p5 (caltech, p4's own) node 4: its filter handle 0x801 + 4.
    const cut = planCut(deployment1, addresses, 'p4', ['p1', 'p5'], true);
    assert.deepEqual(cut, [
      line(
        'tc class replace dev eth0 parent 1: classid 1:2 htb rate 10000mbit ceil 10000mbit burst 1250000 cburst 1250000 quantum 1514',
      ),
      line('tc qdisc replace dev eth0 parent 1:2 handle 2: pfifo limit 0'),
      line(
        'tc filter replace dev eth0 parent 1: protocol ip prio 1 handle 800::3 u32 match ip dst 10.231.3.1/32 flowid 1:2',
      ),
      line(
        'tc filter replace dev eth0 parent 1: protocol ip prio 1 handle 800::805 u32 match ip dst 10.231.1.5/32 flowid 1:2',
      ),
    ]);
    // The filter abroad is the plan's own (same handle): a heal points it back at fnal's class.
    assert.deepEqual(
      commandsOf(plan, 'p4')
        .find((c) => c.includes('800::3'))
        ?.slice(0, 13),
      cut[2]!.slice(0, 13),
    );
    assert.deepEqual(planCut(deployment1, addresses, 'p4', ['p1', 'p5', 'p4'], false), [
      line(
        'tc filter replace dev eth0 parent 1: protocol ip prio 1 handle 800::3 u32 match ip dst 10.231.3.1/32 flowid 1:12',
      ),
      line('tc filter del dev eth0 parent 1: protocol ip prio 1 handle 800::805 u32'),
    ]);
    assert.throws(() => planCut(deployment1, new Map(), 'p4', ['p1'], true), /no address for p1/);
  });

  it('gives every node one class per remote data center and one filter per remote peer', () => {
    assert.deepEqual([...plan.keys()].sort(), ['p1', 'p2', 'p3', 'p4', 'p5']);
    for (const self of deployment1.nodes) {
      const cmds = commandsOf(plan, self.id);
      assert.deepEqual(cmds.slice(0, 2), ROOT, self.id);
      for (const c of cmds) assert.equal(c[0], 'tc', c.join(' '));

      const remote = deployment1.datacenters
        .map((dc, i) => ({ dc, classid: remoteClassId(i) }))
        .filter(({ dc }) => dc.name !== self.datacenter);
      const classes = cmds.filter((c) => c[1] === 'class').map((c) => c[c.indexOf('classid') + 1]);
      assert.deepEqual(classes, ['1:1', ...remote.map((r) => r.classid)], self.id);

      // Each remote class has one netem leaf with that direction's delay and jitter.
      for (const { dc, classid } of remote) {
        const leaves = cmds.filter((c) => c[1] === 'qdisc' && c.includes('parent') && c.includes(classid));
        assert.equal(leaves.length, 1, `${self.id}: leaves of ${classid}`);
        const leaf = leaves[0] ?? [];
        const delay = deployment1.oneWayDelayMs(self.datacenter, dc.name);
        const jitter = deployment1.jitterMs(self.datacenter, dc.name);
        assert.equal(leaf[leaf.indexOf('delay') + 1], `${delay.toFixed(3)}ms`);
        assert.equal(leaf[leaf.indexOf('delay') + 2], `${jitter.toFixed(3)}ms`);
        assert.ok(leaf.includes('rate'), `${self.id}: jittered leaf without rate would reorder`);
      }

      // Exactly the peers of remote data centers are filtered, each to its data center's class;
      // peers in the same data center (and the node itself) fall to the default class 1:1.
      const expected = new Map<string, string>();
      for (const { dc, classid } of remote)
        for (const n of dc.nodes) expected.set(addresses.get(n.id) + '/32', classid);
      assert.deepEqual(filtersOf(cmds), expected, self.id);
      for (const n of deployment1.nodes.filter((n) => n.datacenter === self.datacenter))
        assert.ok(!filtersOf(cmds).has(`${addresses.get(n.id)}/32`), `${self.id} filters same-DC ${n.id}`);

      // u32 handles are distinct, so `replace` updates rather than stacks.
      const handles = cmds.filter((c) => c[1] === 'filter').map((c) => c[c.indexOf('handle') + 1]);
      assert.equal(new Set(handles).size, handles.length);
    }
  });

  it('sizes limit by bandwidth and delay, and honours dev and rate', () => {
    const p1 = commandsOf(planNetem(deployment1, addresses, { dev: 'veth7', rateMbit: 100 }), 'p1');
    for (const c of p1) assert.equal(c[c.indexOf('dev') + 1], 'veth7');
    const toCaltech = p1.find((c) => c.includes('netem') && c.includes('1:10'));
    // 100 Mbit/s × (38.53 + 0.7706) ms / 12000 bit × 2 = 655.0 → the floor of 1000 applies.
    assert.deepEqual(toCaltech?.slice(-4), ['limit', '1000', 'rate', '100mbit']);
    const half = commandsOf(planNetem(deployment1, addresses, { rateMbit: 500 }), 'p1');
    const halfLeaf = half.find((c) => c.includes('netem') && c.includes('1:10'));
    // 500 Mbit/s × 39.3006 ms / 12000 bit × 2 = 3275.05 → 3276.
    assert.equal(halfLeaf?.[halfLeaf.indexOf('limit') + 1], '3276');
  });

  it('builds the same tree with pfifo leaves of the same limits', () => {
    const netem = commandsOf(plan, 'p4');
    const pfifo = commandsOf(planNetem(deployment1, addresses, { leaf: 'pfifo' }), 'p4');
    assert.equal(pfifo.length, netem.length);
    for (const [i, c] of pfifo.entries()) {
      const n = netem[i] ?? [];
      if (!n.includes('netem')) assert.deepEqual(c, n);
      else
        assert.deepEqual(c, [...n.slice(0, n.indexOf('netem')), 'pfifo', 'limit', n[n.indexOf('limit') + 1]]);
    }
    assert.deepEqual(pfifo[3], line('tc qdisc replace dev eth0 parent 1:11 handle 11: pfifo limit 1000'));
    assert.deepEqual(pfifo[5], line('tc qdisc replace dev eth0 parent 1:12 handle 12: pfifo limit 6551'));
  });

  it('rejects a missing or non-IPv4 address', () => {
    const missing = new Map(addresses);
    missing.delete('p3');
    assert.throws(() => planNetem(deployment1, missing), /no address for node p3/);
    assert.throws(
      () => planNetem(deployment1, new Map([...addresses, ['p2', 'fd00::2']])),
      /address of p2 is not IPv4/,
    );
    assert.throws(() => planNetem(deployment1, addresses, { rateMbit: 0 }), /rateMbit/);
  });
});

const TWO_DC = (shaping: string, links: string) => `
datacenters:
  - { name: east, nodes: [e1, e2] }
  - { name: west, nodes: [w3] }
links:
${links}
${shaping}
`;

describe('planNetem: jitter and direction', () => {
  it('renders jitter 0 as a bare delay: no jitter, no distribution, no rate', () => {
    // 2 × 1 Gbit/s × 10 ms / 12000 bit = 1666.7 → 1667 packets.
    const t = parseTopology('flat.yaml', TWO_DC('', '  - { between: [east, west], rtt: 20ms }'));
    const e1 = commandsOf(planNetem(t, addressesOf(t)), 'e1');
    assert.deepEqual(
      e1.find((c) => c.includes('netem')),
      line('tc qdisc replace dev eth0 parent 1:11 handle 11: netem delay 10.000ms limit 1667'),
    );
  });

  it('gives each direction its own delay and jitter', () => {
    const links = '  - { from: east, to: west, delay: 30ms }\n  - { from: west, to: east, delay: 2.5ms }';
    const t = parseTopology('asym.yaml', TWO_DC('shaping: { jitter: 1ms, distribution: normal }', links));
    const plan = planNetem(t, addressesOf(t));
    const leaf = (node: string) => commandsOf(plan, node).find((c) => c.includes('netem'));
    // east → west: 2 × 1 Gbit/s × 31 ms / 12000 bit = 5166.7 → 5167 packets.
    assert.deepEqual(
      leaf('e2'),
      line(
        'tc qdisc replace dev eth0 parent 1:11 handle 11: netem delay 30.000ms 1.000ms distribution normal limit 5167 rate 1000mbit',
      ),
    );
    assert.deepEqual(
      leaf('w3'),
      line(
        'tc qdisc replace dev eth0 parent 1:10 handle 10: netem delay 2.500ms 1.000ms distribution normal limit 1000 rate 1000mbit',
      ),
    );
    assert.deepEqual(
      filtersOf(commandsOf(plan, 'w3')),
      new Map([
        ['10.231.1.1/32', '1:10'],
        ['10.231.1.2/32', '1:10'],
      ]),
    );
  });

  it('leaves out the distribution for uniform (netem without a table is uniform)', () => {
    const t = parseTopology(
      'uni.yaml',
      TWO_DC('shaping: { jitter: 10%, distribution: uniform }', '  - { between: [east, west], rtt: 20ms }'),
    );
    const netem = commandsOf(planNetem(t, addressesOf(t)), 'w3').find((c) => c.includes('netem')) ?? [];
    assert.deepEqual(
      netem.slice(netem.indexOf('netem')),
      line('netem delay 10.000ms 1.000ms limit 1834 rate 1000mbit'),
    );
  });
});

describe('renderPlan', () => {
  it('prints one shell line per command under a comment per node', () => {
    const plan = new Map([
      ['p1', [['tc', 'qdisc', 'show']]],
      ['p2', [['tc', 'filter', 'x y', "it's"]]],
    ]);
    assert.equal(
      renderPlan(plan),
      "# p1: run in its network namespace\ntc qdisc show\n# p2: run in its network namespace\ntc filter 'x y' 'it'\\''s'\n",
    );
  });

  it('renders the deployment-1 plan with every command', () => {
    const plan = planNetem(deployment1, addressesOf(deployment1));
    const text = renderPlan(plan);
    const total = [...plan.values()].reduce((n, cmds) => n + cmds.length, 0);
    assert.equal(text.split('\n').filter((l) => l.startsWith('tc ')).length, total);
    assert.ok(
      text.includes('\ntc qdisc replace dev eth0 parent 1:12 handle 12: netem delay 38.530ms 0.771ms'),
    );
  });
});

describe('applyPlan and parseClassStats', () => {
  it('runs commands in order and names the one that fails', async () => {
    const ran: string[] = [];
    await applyPlan(
      [
        ['tc', 'a'],
        ['tc', 'b'],
      ],
      async (argv) => void ran.push(argv.join(' ')),
    );
    assert.deepEqual(ran, ['tc a', 'tc b']);
    ran.length = 0;
    await assert.rejects(
      applyPlan(
        [
          ['tc', 'a'],
          ['tc', 'b'],
          ['tc', 'c'],
        ],
        async (argv) => {
          ran.push(argv.join(' '));
          if (argv[1] === 'b') throw new Error('RTNETLINK answers: File exists');
        },
      ),
      /shaping command 2 of 3 failed: tc b: RTNETLINK answers: File exists/,
    );
    assert.deepEqual(ran, ['tc a', 'tc b']);
  });

  it('parses tc -s class show', () => {
    const text = [
      'class htb 1:11 root leaf 11: prio 0 rate 1Gbit ceil 1Gbit burst 125000b cburst 125000b ',
      ' Sent 2352 bytes 24 pkt (dropped 0, overlimits 0 requeues 0) ',
      ' backlog 0b 0p requeues 0',
      ' lended: 24 borrowed: 0 giants: 0',
      ' tokens: 999 ctokens: 999',
      '',
      'class htb 1:1 root prio 0 rate 10Gbit ceil 10Gbit burst 1250Kb cburst 1250Kb ',
      ' Sent 98 bytes 1 pkt (dropped 0, overlimits 0 requeues 0) ',
      ' backlog 0b 0p requeues 0',
      '',
    ].join('\n');
    assert.deepEqual(
      parseClassStats(text),
      new Map([
        ['1:11', { bytes: 2352, packets: 24 }],
        ['1:1', { bytes: 98, packets: 1 }],
      ]),
    );
    assert.equal(parseClassStats('').size, 0);
  });
});
