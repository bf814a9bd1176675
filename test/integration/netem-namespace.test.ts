// The netem plan applied for real: one network namespace per node of paper-3dc-deployment-1, all on
// a bridge (itself in a namespace of its own), the htb tree with its u32 filters applied in p4's
// namespace with pfifo leaves standing in for netem (this workplace's kernel has no sch_netem), UDP
// sent from p4 to peers in each remote data center and in its own, and `tc -s class show` read back:
// each peer's packets land in its data center's class, same-DC packets in the default class. Then
// the probe: it must say whether netem exists here, and if it does, a netem plan must apply.
// Needs root, iproute2 and the right to make network namespaces (skips with the reason otherwise).
// Nothing outside the test's own namespaces is touched; they are all deleted afterwards, also when
// a test fails.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { applyPlan, readClassStats, type ClassStats } from '../../src/shaping/netem/apply-plan.js';
import { planNetem, remoteClassId, type NetemLeaf } from '../../src/shaping/netem/netem-plan.js';
import { probeNetem } from '../../src/shaping/netem/netem-probe.js';
import { netemControls } from '../../src/shaping/netem/netem-shaper.js';
import { inNetns, runChecked, runCommand } from '../../src/shaping/netem/run-command.js';
import { loadTopology } from '../../src/topology/topology.js';

const PREFIX = `pbtest-netem-${process.pid}`;
const BRIDGE_NS = `${PREFIX}-br`;
const nsOf = (node: string): string => `${PREFIX}-${node}`;
const DEV = 'eth0';

async function skipReason(): Promise<string | false> {
  if (process.getuid?.() !== 0) return 'needs root to create network namespaces';
  const netns = await runCommand(['ip', 'netns', 'list']);
  if (netns.code !== 0) return `ip netns is unavailable (${netns.failure ?? netns.stderr.trim()})`;
  const tc = await runCommand(['tc', '-V']);
  if (tc.code !== 0) return `tc is unavailable (${tc.failure ?? tc.stderr.trim()})`;
  // Root may still be refused a namespace: in a container without CAP_SYS_ADMIN, `ip netns add`
  // cannot make /run/netns a shared mount. Try once, with a name of the test's own.
  const probe = `${PREFIX}-probe0`;
  const added = await runCommand(['ip', 'netns', 'add', probe]);
  if (added.code !== 0) {
    await runCommand(['ip', 'netns', 'del', probe]); // in case it got as far as the name
    const why = added.failure ?? added.stderr.trim().replace(/\s*\n\s*/g, '; ');
    return (
      `no network namespace can be made here: ip netns add: ${why} ` +
      '(needs root with CAP_SYS_ADMIN, e.g. a host, or a container started with --cap-add SYS_ADMIN)'
    );
  }
  const deleted = await runCommand(['ip', 'netns', 'del', probe]);
  if (deleted.code !== 0)
    throw new Error(`could not remove the probe namespace ${probe}: ${deleted.stderr.trim()}`);
  return false;
}
const skip = await skipReason();

function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'topologies', 'paper-3dc-deployment-1.yaml'))) {
    const up = dirname(dir);
    assert.notEqual(up, dir, 'no topologies/ above the test file');
    dir = up;
  }
  return dir;
}

const topology = loadTopology(join(repoRoot(), 'topologies', 'paper-3dc-deployment-1.yaml'));
const dcIndex = (dc: string): number => topology.datacenters.findIndex((d) => d.name === dc);
/** 10.231.<data center index + 1>.<sid>, all in one /16 on the bridge. */
const addresses = new Map(topology.nodes.map((n) => [n.id, `10.231.${dcIndex(n.datacenter) + 1}.${n.sid}`]));
const addr = (node: string): string => addresses.get(node) ?? assert.fail(`no address for ${node}`);

const created: string[] = [];
async function addNamespace(ns: string): Promise<void> {
  await runChecked(['ip', 'netns', 'add', ns]);
  created.push(ns);
}

async function deleteNamespaces(): Promise<string[]> {
  const problems: string[] = [];
  // Everything this process made carries its prefix, including what a half-finished set-up left.
  const listed = (await runCommand(['ip', 'netns', 'list'])).stdout
    .split('\n')
    .map((l) => l.split(' ')[0] ?? '')
    .filter((name) => name.startsWith(PREFIX));
  for (const ns of new Set([...created, ...listed])) {
    const r = await runCommand(['ip', 'netns', 'del', ns]);
    if (r.code !== 0 && !/No such file/.test(r.stderr)) problems.push(`${ns}: ${r.stderr.trim()}`);
  }
  return problems;
}

const tcIn = (ns: string) => (argv: string[]) => runChecked(inNetns(ns, argv));
const statsOf = (node: string): Promise<Map<string, ClassStats>> => readClassStats(tcIn(nsOf(node)), DEV);

/** Send `count` UDP datagrams from `from`'s namespace to `to` (port 9, discard). */
async function sendUdp(from: string, to: string, count: number): Promise<void> {
  const script = `
    const s = require('node:dgram').createSocket('udp4');
    const [dst, n] = process.argv.slice(1);
    (async () => {
      for (let i = 0; i < Number(n); i++)
        await new Promise((ok, fail) => s.send(Buffer.alloc(64, i), 9, dst, (e) => (e ? fail(e) : ok())));
      s.close();
    })().catch((e) => { console.error(e); process.exit(1); });`;
  await runChecked(inNetns(nsOf(from), [process.execPath, '-e', script, to, String(count)]));
}

/** Packets through each class since `before`. */
function delta(after: Map<string, ClassStats>, before: Map<string, ClassStats>): Map<string, number> {
  const d = new Map<string, number>();
  for (const [id, s] of after) d.set(id, s.packets - (before.get(id)?.packets ?? 0));
  return d;
}

/** Poll the class counters until `done` holds (packets may wait on ARP), or fail after a deadline. */
async function waitForStats(
  node: string,
  done: (s: Map<string, ClassStats>) => boolean,
  what: string,
): Promise<Map<string, ClassStats>> {
  const deadline = Date.now() + 3000;
  for (;;) {
    const s = await statsOf(node);
    if (done(s)) return s;
    if (Date.now() > deadline)
      assert.fail(`${what}: not seen within 3 s; classes: ${JSON.stringify([...s])}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function leafPlan(leaf: NetemLeaf): string[][] {
  return planNetem(topology, addresses, { dev: DEV, leaf }).get('p4') ?? assert.fail('no plan for p4');
}

describe('netem plan in network namespaces', { skip }, () => {
  before(async () => {
    await addNamespace(BRIDGE_NS);
    const br = (...args: string[]) => runChecked(['ip', '-n', BRIDGE_NS, ...args]);
    await br('link', 'add', 'br0', 'type', 'bridge');
    await br('link', 'set', 'br0', 'up');
    for (const n of topology.nodes) {
      const ns = nsOf(n.id);
      await addNamespace(ns);
      // The node's end is born as eth0 inside its namespace; the other end joins the bridge.
      await br('link', 'add', `v${n.id}`, 'type', 'veth', 'peer', 'name', DEV, 'netns', ns);
      await br('link', 'set', `v${n.id}`, 'master', 'br0', 'up');
      const ip = (...args: string[]) => runChecked(['ip', '-n', ns, ...args]);
      await ip('addr', 'add', `${addr(n.id)}/16`, 'dev', DEV);
      await ip('link', 'set', DEV, 'up');
      await ip('link', 'set', 'lo', 'up');
    }
  });

  after(async () => {
    const problems = await deleteNamespaces();
    assert.deepEqual(problems, [], 'namespaces left behind');
  });

  it("sends each peer's packets through its data center's class (pfifo leaves)", async () => {
    await applyPlan(leafPlan('pfifo'), tcIn(nsOf('p4')));
    const filters = await runChecked(inNetns(nsOf('p4'), ['tc', 'filter', 'show', 'dev', DEV]));
    assert.equal(filters.match(/flowid/g)?.length, 3, filters); // p2, p3 (slac) and p1 (fnal)
    const qdiscs = await runChecked(inNetns(nsOf('p4'), ['tc', 'qdisc', 'show', 'dev', DEV]));
    assert.match(qdiscs, /qdisc htb 1: root/);
    assert.match(qdiscs, /qdisc pfifo 11: parent 1:11 limit 1000p/);
    assert.match(qdiscs, /qdisc pfifo 12: parent 1:12 limit 6551p/);

    const slac = remoteClassId(dcIndex('slac'));
    const fnal = remoteClassId(dcIndex('fnal'));
    const remote = [slac, fnal];
    // Distinct counts, so a packet in the wrong class could not go unnoticed.
    const cases = [
      { peer: 'p2', count: 7, classid: slac },
      { peer: 'p3', count: 3, classid: slac },
      { peer: 'p1', count: 5, classid: fnal },
      { peer: 'p5', count: 6, classid: '1:1' }, // caltech, like p4: the default class
    ];
    for (const { peer, count, classid } of cases) {
      const before = await statsOf('p4');
      assert.deepEqual([...before.keys()].sort(), ['1:1', slac, fnal].sort());
      await sendUdp('p4', addr(peer), count);
      const got = await waitForStats(
        'p4',
        (s) => (delta(s, before).get(classid) ?? 0) >= count,
        `${count} packets to ${peer} in ${classid}`,
      );
      const d = delta(got, before);
      for (const other of remote.filter((c) => c !== classid))
        assert.equal(d.get(other), 0, `packets to ${peer} leaked into ${other}`);
      // Remote classes carry only IPv4 to their peers; the default class also carries ARP.
      if (classid === '1:1') assert.ok((d.get('1:1') ?? 0) >= count, `default class: ${d.get('1:1')}`);
      else assert.equal(d.get(classid), count, `packets to ${peer} in ${classid}`);
    }
  });

  it('cuts a partition by filters to a dropping class, both ways, with no netem; heals it back', async () => {
    // p1 (fnal) and p5 (caltech, p4's own data center) get their trees too: a cut is both ends'.
    for (const n of ['p1', 'p5'])
      await applyPlan(
        planNetem(topology, addresses, { dev: DEV, leaf: 'pfifo' }).get(n) ?? assert.fail(`no plan for ${n}`),
        tcIn(nsOf(n)),
      );
    const controls = netemControls(topology, () => ({
      addresses,
      exec: (id, argv) => runChecked(inNetns(nsOf(id), argv)),
      dev: () => DEV,
    }));
    const dropped = async (node: string): Promise<number> => {
      const q = await runChecked(inNetns(nsOf(node), ['tc', '-s', 'qdisc', 'show', 'dev', DEV]));
      const m = /qdisc pfifo 2: parent 1:2 limit 0p\s+Sent \d+ bytes \d+ pkt \(dropped (\d+)/.exec(q);
      return m ? Number(m[1]) : 0;
    };
    const fnal = remoteClassId(dcIndex('fnal'));
    assert.equal(await controls.cut(['p4'], ['p1', 'p5'], true), true);
    const d0 = await dropped('p4');
    const before = await statsOf('p4');
    await sendUdp('p4', addr('p1'), 5);
    await sendUdp('p4', addr('p5'), 6);
    const d1 = await dropped('p4');
    assert.ok(d1 - d0 >= 11, `p4 dropped ${d1 - d0} of the 11 packets to p1 and p5`);
    assert.equal(delta(await statsOf('p4'), before).get(fnal), 0, 'nothing to p1 through fnal’s class');
    // The other end too: p1's packets to p4.
    const p1d = await dropped('p1');
    await sendUdp('p1', addr('p4'), 4);
    assert.ok((await dropped('p1')) - p1d >= 4, 'p1 drops what it sends p4');

    assert.equal(await controls.cut(['p4'], ['p1', 'p5'], false), true);
    const healed = await statsOf('p4');
    await sendUdp('p4', addr('p1'), 5);
    await sendUdp('p4', addr('p5'), 6);
    await waitForStats(
      'p4',
      (s) => (delta(s, healed).get(fnal) ?? 0) >= 5 && (delta(s, healed).get('1:1') ?? 0) >= 6,
      'healed: p1 through fnal’s class, p5 through the default one',
    );
    assert.equal(await dropped('p4'), d1, 'nothing dropped once healed');
    const filters = await runChecked(inNetns(nsOf('p4'), ['tc', 'filter', 'show', 'dev', DEV]));
    assert.equal(filters.match(/flowid/g)?.length, 3, `p5's filter went with the heal: ${filters}`);

    // One way: p1's sends to p4 are cut, p4's to p1 still go.
    assert.equal(await controls.cut(['p1'], ['p4'], true, true), true);
    const p1Before = await dropped('p1');
    await sendUdp('p1', addr('p4'), 4);
    assert.ok((await dropped('p1')) - p1Before >= 4, 'p1 drops what it sends p4');
    const oneWay = await statsOf('p4');
    const p4Before = await dropped('p4');
    await sendUdp('p4', addr('p1'), 5);
    await waitForStats(
      'p4',
      (s) => (delta(s, oneWay).get(fnal) ?? 0) >= 5,
      'p4 still reaching p1 through fnal’s class',
    );
    assert.equal(await dropped('p4'), p4Before, 'p4 drops nothing it sends p1');
    assert.equal(await controls.cut(['p1'], ['p4'], false, true), true);
  });

  it('probes for netem: unavailable here with an actionable reason, or else a netem plan applies', async () => {
    const probe = await probeNetem({ nsPrefix: `${PREFIX}-probe` });
    const left = (await runCommand(['ip', 'netns', 'list'])).stdout;
    assert.ok(!left.includes(`${PREFIX}-probe`), `probe left its namespace: ${left}`);
    if (!probe.available) {
      assert.match(probe.reason, /sch_netem/);
      assert.match(probe.reason, /--shaping relay/);
      return;
    }
    // htb cannot be changed in place: drop the pfifo tree of the test above before shaping again.
    await runCommand(inNetns(nsOf('p4'), ['tc', 'qdisc', 'del', 'dev', DEV, 'root']));
    await applyPlan(leafPlan('netem'), tcIn(nsOf('p4')));
    const qdiscs = await runChecked(inNetns(nsOf('p4'), ['tc', 'qdisc', 'show', 'dev', DEV]));
    assert.match(qdiscs, /qdisc netem 12: parent 1:12 .*delay 38\.53ms/, qdiscs);
  });
});
