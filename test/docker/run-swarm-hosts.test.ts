// `pole-bench run --runtime swarm` across hosts: a local swarm of three Docker-in-Docker hosts made
// by `pole-bench swarm up`, one per data center of paper-3dc-deployment-1, and the run on it with
// the leader killed. Every member, agent and fault helper then runs in another engine than the
// harness's, and the members of different data centers on different hosts, reached through the
// swarm's overlay. The oracle's leader elected, nothing lost, the report written, and after the
// run nothing of it on any host; then, on the same swarm, a follower on a host of its own killed
// and restarted: it keeps its log (its volume stays on its host) and rejoins by DIFF; last, a host
// killed mid-run: the run ends on time with exit 3 naming the host, its report written, nothing
// acknowledged lost and nothing of it left on the hosts still up. Between those, the same with
// stock ZooKeeper: FLE's choice elected, the relay in the path abroad only; with etcd: Raft's new
// leader, nothing lost; and netem's tree in the
// tasks, as far as this kernel (no netem) allows. After `swarm down`, nothing of the swarm.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import type Docker from 'dockerode';
import { engineAt, findSwarmResources } from '../../src/runtime/swarm/local/dind-host.js';
import type { SwarmUpResult } from '../../src/runtime/swarm/local/local-swarm.js';
import { ROOT, RUN_JS, runCli, runCliOnAQuietMachine } from '../support/run-cli.js';
import type { RunResult } from '../../src/report/result.js';
import { CHECKS } from '../../src/report/self-check.js';
import { assertSelfCheckClean } from '../support/self-check-clean.js';
import { eventsOf } from '../support/partition-checks.js';
import { dockerSkipReason, nodeImage, passedSwarmRun, swarmLeftovers } from './docker-env.js';
import { topScored } from '../support/scores.js';
import { loadTopology } from '../../src/topology/topology.js';
import { SwarmRuntime } from '../../src/runtime/swarm/swarm-runtime.js';
import { parseClassStats } from '../../src/shaping/netem/apply-plan.js';
import { remoteClassId } from '../../src/shaping/netem/netem-plan.js';

const TOPOLOGY = join(ROOT, 'topologies', 'paper-3dc-deployment-1.yaml');

/** Each data center's median before the kill at least its model: the relay is in every path abroad. */
function medianAboveModel(res: RunResult, say: (line: string) => void): void {
  for (const dc of ['caltech', 'slac', 'fnal']) {
    const s = res.latency[dc]?.before;
    const model = res.model[dc]?.before ?? NaN;
    say(`${dc} before: mean ${s?.mean?.toFixed(2)} ms, p50 ${s?.p50?.toFixed(2)}, model ${model}`);
    assert.ok((s?.p50 ?? NaN) >= 0.98 * model, `${dc}: p50 ${s?.p50} under the model ${model}`);
  }
}
const MONO_SHIFT_S = 1000;

test('paper-3dc-deployment-1 on a 3-host local swarm, a data center per host: p5 killed, the oracle’s leader elected, nothing lost or left', async (t) => {
  const skip = await dockerSkipReason();
  if (skip) return t.skip(skip);
  const found = await findSwarmResources();
  if (found.hosts.length + found.networks.length > 0)
    return t.skip('a local swarm is up on this machine already (pole-bench swarm down removes it)');
  const dir = mkdtempSync(join(tmpdir(), 'pole-swarm-hosts-'));
  const env = { ...process.env, POLE_SWARM_STATE: join(dir, 's') };
  let passed = false;
  // A failed subtest does not throw here: counted, so that its run's reports are kept too.
  let subtestFailed = false;
  const subtest = (name: string, body: () => Promise<void>): Promise<void> =>
    t.test(name, async () => {
      try {
        await body();
      } catch (err) {
        subtestFailed = true;
        throw err;
      }
    });
  try {
    const t0 = performance.now();
    const up = await runCli(
      // caltech's host as if booted 1000 s earlier than the others: its containers' monotonic
      // clocks are ahead by that much, and every stamp of its members must be moved back.
      [
        'swarm',
        'up',
        '--topology',
        TOPOLOGY,
        '--images',
        'node,zookeeper,etcd',
        '--mono-shift',
        `caltech=${MONO_SHIFT_S}`,
        '--json',
      ],
      env,
    );
    assert.equal(up.code, 0, up.stderr);
    const swarm = JSON.parse(up.stdout) as SwarmUpResult;
    /** `pole-bench run ARGS --runtime swarm` against this swarm's manager. */
    const swarmRun = (args: string[]): ReturnType<typeof runCli> =>
      runCliOnAQuietMachine(
        ['run', ...args, '--runtime', 'swarm'],
        { ...env, DOCKER_HOST: swarm.dockerHost },
        console.log,
      );
    /** paper-3dc-deployment-1 on `target` at 200 writes/s for 25 s, p5 killed at 10 s: the passed result. */
    const p5KilledOn = async (target: string, out: string): Promise<RunResult> => {
      const r = await swarmRun([
        ...[TOPOLOGY, '--target', target, '--rate', '200', '--duration', '25s', '--kill-at', '10s'],
        ...['--seed', '3', '--json', '--out', out],
      ]);
      const res = passedSwarmRun(r);
      assert.equal(res.target, target);
      return res;
    };
    t.diagnostic(
      `swarm up (3 hosts, node, ZooKeeper and etcd images): ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    assert.deepEqual(swarm.skippedImages, [], 'every image loaded');
    assert.deepEqual(
      swarm.state.hosts.map((h) => h.dc),
      ['caltech', 'slac', 'fnal'],
    );

    const out = join(dir, 'run');
    const t1 = performance.now();
    const r = await swarmRun([
      TOPOLOGY,
      '--oracle',
      'history',
      '--rate',
      '200',
      '--duration',
      '30s',
      '--kill-at',
      '12s',
      '--seed',
      '3',
      '--json',
      '--out',
      out,
    ]);
    t.diagnostic(`run took ${((performance.now() - t1) / 1000).toFixed(1)} s`);
    const result = passedSwarmRun(r);
    // history: the survivor with the newest log, ties to the highest id (ZooKeeper's rule). p4, in
    // p5's data center, has p5's last writes first and wins, unless it lags on the busy machine: a
    // run here read p4 at 3615 and p1-p3 at 3617, and p3 led, as the rule says.
    const top = topScored(result.leaders.scores);
    assert.equal(result.leaders.elected, top.at(-1), JSON.stringify(result.leaders.scores));
    if (result.leaders.elected !== 'p4')
      t.diagnostic(`${result.leaders.elected} elected: scores ${JSON.stringify(result.leaders.scores)}`);
    assert.equal(result.writes.lost, 0);
    assert.equal(result.writes.acked, result.writes.attempted);
    // Each agent's clocks were held against its node's helper's (one kernel, one monotonic clock).
    const hosts = result.clocks?.hosts ?? {};
    for (const dc of ['caltech', 'slac', 'fnal']) {
      const node = swarm.state.hosts.find((h) => h.dc === dc)?.name;
      assert.equal(hosts[`agent ${dc}`]?.sharesKernelWith, node, `agent ${dc} ran on ${node}`);
    }
    assert.ok(result.selfCheck.checked.includes(CHECKS.oneKernelOneClock), 'the clocks were held together');
    assertSelfCheckClean(result);
    // caltech's host, shifted by a known amount, is measured so within the stated uncertainty,
    // before and after the load, against slac's (same kernel, same wall clock, no shift).
    const [shifted, plain] = ['caltech', 'slac'].map((dc) => {
      const name = swarm.state.hosts.find((h) => h.dc === dc)?.name ?? dc;
      const c = hosts[name];
      assert.ok(c?.before && c.after, `${name}'s clocks measured before and after the load`);
      return c;
    });
    for (const w of ['before', 'after'] as const) {
      const a = shifted![w]!;
      const b = plain![w]!;
      const within = a.uncertaintyMs + b.uncertaintyMs;
      const mono = a.monoOffsetMs - b.monoOffsetMs - MONO_SHIFT_S * 1000;
      const wall = a.offsetMs - b.offsetMs;
      t.diagnostic(
        `clocks ${w}: caltech's monotonic shift measured ${(MONO_SHIFT_S * 1000 + mono).toFixed(3)} ms (set ${MONO_SHIFT_S * 1000}), wall ${wall.toFixed(3)} ms, ± ${within.toFixed(3)} ms`,
      );
      assert.ok(Math.abs(mono) <= within, `${w}: monotonic shift off by ${mono} ms, ± ${within}`);
      assert.ok(Math.abs(wall) <= within, `${w}: wall clocks differ by ${wall} ms, ± ${within}`);
    }
    // The self-check reads every container of the run through its node's helper: each member that
    // lived through the load, each agent, the relay and the helpers use CPU; p5, killed, was read
    // once and has no figure. All on this machine's kernel: none marked as elsewhere.
    const cpu = result.cpu;
    const used = (g: string): string[] =>
      cpu.processes.filter((p) => p.group === g && p.pctOfCore > 0).map((p) => p.label);
    assert.deepEqual(used('nodes').sort(), ['p1', 'p2', 'p3', 'p4'], JSON.stringify(cpu.processes));
    assert.deepEqual(used('agents').sort(), ['caltech', 'fnal', 'slac']);
    assert.deepEqual(used('relay'), ['relay']);
    assert.equal(used('helpers').length, 3);
    assert.deepEqual(cpu.unread, ['p5']);
    assert.ok(!cpu.processes.some((p) => p.elsewhere), 'every host is this machine’s kernel');
    t.diagnostic(
      `CPU: nodes ${cpu.groups['nodes']?.pctOfCore.toFixed(1)} %, agents ${cpu.groups['agents']?.pctOfCore.toFixed(1)} %, relay ${cpu.groups['relay']?.pctOfCore.toFixed(1)} %, helpers ${cpu.groups['helpers']?.pctOfCore.toFixed(1)} % of a core; not ours ${cpu.shares?.notOursPct.toFixed(1)} % of all cores`,
    );
    assert.ok(existsSync(join(out, 'report.md')) && existsSync(join(out, 'result.json')), 'report written');
    // The relay's delays, measured through it from where it runs, are the topology's. Over them
    // by less than half the shortest link (4.94 ms): a doubled or another link's delay is 9.88 ms
    // or more off, while a relay released late by three hosts' daemons and a starting cluster on
    // two cores is not what this checks (a CI run read slac→fnal 3.56 ms over, median of 20).
    const links = [
      ['slac', 'caltech', 9.88],
      ['slac', 'fnal', 53.26],
      ['caltech', 'fnal', 77.06],
    ] as const;
    const over = Math.min(...links.map(([, , rtt]) => rtt)) / 2;
    t.diagnostic(`link readings ${JSON.stringify(result.linkReadings)}`);
    for (const [a, b, rtt] of links) {
      const m = result.links[a]?.[b]?.measuredRttMs ?? result.links[b]?.[a]?.measuredRttMs ?? NaN;
      t.diagnostic(`${a}→${b}: measured ${m} ms, configured ${rtt}`);
      assert.ok(m >= rtt - 0.5 && m < rtt + over, `${a}→${b}: measured ${m} ms, configured ${rtt}`);
    }
    for (const dc of ['caltech', 'slac', 'fnal'])
      for (const w of ['before', 'after'] as const) {
        const s = result.latency[dc]?.[w];
        const model = result.model[dc]?.[w] ?? NaN;
        const floor = result.floor.perDc[dc]?.[w] ?? NaN;
        t.diagnostic(
          `${dc} ${w}: mean ${s?.mean?.toFixed(2)} ms, p50 ${s?.p50?.toFixed(2)}, model ${model.toFixed(2)} + floor ${floor.toFixed(2)} (${s?.count} writes)`,
        );
        assert.ok((s?.count ?? 0) > 100, `${dc} ${w}: ${s?.count} writes`);
        // Every path has the modelled delay in it: no median under it.
        assert.ok((s?.p50 ?? NaN) >= 0.98 * model, `${dc} ${w}: p50 ${s?.p50} under the model ${model}`);
      }
    await nothingOfTheRunLeft(swarm);

    await subtest(
      'a follower on a host of its own killed and restarted keeps its log and rejoins by DIFF',
      async () => {
        // p1 alone in fnal, on the third host: the kill at 7 s (after the 5 s warm-up), the restart at 11 s, the leader untouched.
        const file = withFaults(dir, 'restart-follower', [
          { at: '7s', kill: 'p1' },
          { at: '11s', restart: 'p1' },
        ]);
        const out2 = join(dir, 'run-restart');
        const r2 = await swarmRun([
          file,
          '--rate',
          '200',
          '--duration',
          '18s',
          '--seed',
          '5',
          '--json',
          '--out',
          out2,
        ]);
        assert.equal(r2.code, 0, `${r2.stderr}\n${r2.stdout.slice(0, 2000)}`);
        const res = JSON.parse(r2.stdout) as RunResult;
        assert.equal(res.verdict, 'passed', res.errors.join('; '));
        assert.equal(res.writes.lost, 0);
        const p1 = (await eventsOf(out2)).filter((e) => e['node'] === 'p1');
        const starts = p1.filter((e) => e['ev'] === 'started');
        assert.equal(starts.length, 2, 'started, then restarted');
        const recovered = (starts[1]!['recovered'] ?? {}) as { txns?: number };
        // Its first life acknowledged ~7 s of writes at 200/s: they are in the log it came back with.
        assert.ok((recovered.txns ?? 0) > 100, `restarted with ${recovered.txns} txns: its volume's log`);
        const t1 = Number(starts[1]!['t']);
        const synced = p1.find((e) => e['ev'] === 'synced' && Number(e['t']) > t1);
        assert.ok(synced, 'synced after the restart');
        assert.equal(synced['kind'], 'DIFF', JSON.stringify(synced));
        // What it missed while down (the kill to its restart's sync: ~7 s at 200/s on this machine).
        const missed = Number(synced['txns']);
        assert.ok(missed > 0, `DIFF of ${missed} txns`);
        t.diagnostic(`p1 restarted with ${recovered.txns} txns in its log, then a DIFF of ${missed}`);
        await nothingOfTheRunLeft(swarm);
      },
    );

    await subtest(
      'the same with --target zookeeper: p5 killed, FLE’s choice elected, the relay in the path abroad only, nothing lost or left',
      async () => {
        const out4 = join(dir, 'run-zookeeper');
        const res = await p5KilledOn('zookeeper', out4);
        assert.equal(res.writes.lost, 0);
        assert.equal(res.writes.acked, res.writes.attempted);
        // FLE elects the best vote it heard in its round (peer epoch, zxid, then sid), which is not
        // always the best proposal made: in a stop CI all four proposed the same zxid and p3 won,
        // p4's proposal not counted (it came while p3 still followed p5). The scores are the votes
        // the leader's log says it heard; a survivor it did not hear is listed apart. It decided on
        // a quorum's votes.
        const { scores, unheard } = res.leaders;
        t.diagnostic(
          `elected ${res.leaders.elected}; votes heard ${JSON.stringify(scores)}; not heard ${JSON.stringify(unheard)}`,
        );
        assert.deepEqual(topScored(scores), [res.leaders.elected]);
        assert.ok(
          res.selfCheck.checked.includes(CHECKS.zkBestVote),
          'the run checked its leader against the votes heard',
        );
        assertSelfCheckClean(res);
        const events = await eventsOf(out4);
        const heard = events.filter(
          (e) =>
            e['ev'] === 'vote-heard' &&
            e['node'] === res.leaders.elected &&
            e['leader'] === res.leaders.elected,
        );
        const round = Math.max(...heard.map((e) => Number(e['round'])));
        const supporters = new Set(heard.filter((e) => e['round'] === round).map((e) => e['from']));
        assert.ok(supporters.size >= 3, `a quorum voted for the leader: ${[...supporters].join(', ')}`);
        assert.ok(existsSync(join(out4, 'report.md')), 'report written');
        // A follower abroad reaches its leader at the relay's one address (the leader's own port:
        // the relay tells sources apart by address); one in the leader's data center at the
        // leader's own task address. p5 leads from the start, p4 is in its data center, p1 is not.
        const following = events.filter((e) => e['ev'] === 'following' && e['leader'] === 'p5');
        const at = (id: string): string => String(following.find((e) => e['node'] === id)?.['address']);
        const [abroad, home] = [at('p1'), at('p4')];
        assert.match(abroad, /^[\d.]+:2892$/, 'p1 dialled p5’s own quorum port');
        assert.match(home, /^[\d.]+:2892$/, 'p4 dialled p5’s own quorum port');
        assert.notEqual(abroad.split(':')[0], home.split(':')[0], 'abroad through the relay, at home direct');
        medianAboveModel(res, (line) => t.diagnostic(line));
        await nothingOfTheRunLeft(swarm);
      },
    );

    await subtest(
      'the same with --target etcd: p5 killed, Raft elects another, peers abroad through the relay, nothing lost or left',
      async () => {
        const res = await p5KilledOn('etcd', join(dir, 'run-etcd'));
        assert.equal(res.leaders.killed, 'p5');
        assert.ok(res.leaders.elected && res.leaders.elected !== 'p5', `elected ${res.leaders.elected}`);
        assert.equal(res.writes.lost, 0);
        assert.equal(res.writes.acked, res.writes.attempted);
        assertSelfCheckClean(res);
        // Every peer link abroad goes through the relay: each data center's median before the kill
        // is at least the model's, which is its round trip to the leader's data center.
        medianAboveModel(res, (line) => t.diagnostic(line));
        await nothingOfTheRunLeft(swarm);
      },
    );

    await subtest(
      'netem in the tasks: each peer’s packets in its data center’s class (pfifo leaf), a partition by filters that outlasts a restart at a new address, then heals; a kernel without netem said plainly',
      async () => {
        // This kernel has no netem: asked for, the run fails at once saying so, and leaves nothing.
        const r5 = await swarmRun([
          TOPOLOGY,
          '--shaping',
          'netem',
          '--duration',
          '20s',
          '--kill-at',
          '10s',
          '--out',
          join(dir, 'run-netem'),
        ]);
        assert.equal(r5.code, 3, r5.stdout + r5.stderr);
        assert.match(
          r5.stdout + r5.stderr,
          /host kernel has no netem qdisc \(sch_netem\).*use --shaping relay/,
        );
        await nothingOfTheRunLeft(swarm);
        // The plan's tree and filters with a pfifo leaf (as far as this kernel goes), in the tasks.
        const topology = loadTopology(TOPOLOGY);
        const rt = new SwarmRuntime(topology, {
          shaping: { kind: 'netem', reason: 'test: the plan with pfifo leaves' },
          seed: 11,
          image: await nodeImage(),
          netemLeaf: 'pfifo',
          docker: engineAt(swarm.dockerHost),
        });
        try {
          await rt.start();
          await rt.waitFor((e) => e.ev === 'serving' && e.leader === undefined, 30_000);
          // Heartbeats to every peer: a few seconds give every class packets.
          await new Promise((r) => setTimeout(r, 3000));
          const shapedDev = async (id: string): Promise<string> => {
            const q = await rt.execInMember(id, ['tc', 'qdisc', 'show']);
            const dev = /qdisc htb 1: dev (\S+) root/.exec(q)?.[1];
            assert.ok(dev, `${id}: no htb root in ${q}`);
            return dev;
          };
          const dev = await shapedDev('p4');
          const stats = parseClassStats(
            await rt.execInMember('p4', ['tc', '-s', 'class', 'show', 'dev', dev]),
          );
          t.diagnostic(`p4 (${dev}) classes: ${JSON.stringify(Object.fromEntries(stats))}`);
          // p4 is in caltech (data center 0): slac {p2, p3} is class 1:11, fnal {p1} 1:12.
          assert.ok((stats.get(remoteClassId(1))?.packets ?? 0) > 0, 'packets to slac in its class');
          assert.ok((stats.get(remoteClassId(2))?.packets ?? 0) > 0, 'packets to fnal in its class');
          // p1 (fnal) killed and restarted: a new task, a new address, in p4's filters again.
          const filtersFor = async (): Promise<string> =>
            rt.execInMember('p4', ['tc', 'filter', 'show', 'dev', dev]);
          const hex = (ip: string): string =>
            ip
              .split('.')
              .map((o) => Number(o).toString(16).padStart(2, '0'))
              .join('');
          const addressOf = async (id: string): Promise<string> => {
            const out = await rt.execInMember(id, [
              'ip',
              '-o',
              '-4',
              'addr',
              'show',
              'dev',
              await shapedDev(id),
            ]);
            return /inet ([\d.]+)\//.exec(out)![1]!;
          };
          const before = await addressOf('p1');
          /** p4's filter for `ip` sends it to `classid`. */
          const classOf = (ip: string, classid: string): RegExp =>
            new RegExp(`flowid ${classid}\\b[^\\n]*\\n\\s+match ${hex(ip)}/ffffffff`);
          assert.match(await filtersFor(), classOf(before, remoteClassId(2)));
          // A partition p4 | p1 by filters to the dropping class (no netem needed): the heartbeats
          // between them are dropped; it outlasts p1's restart at a new address; a heal undoes it.
          assert.equal(await rt.shaping.cut(['p4'], ['p1'], true), true);
          assert.match(await filtersFor(), classOf(before, '1:2'), 'cut: p1 in the dropping class');
          const droppedAt = async (id: string): Promise<number> => {
            const q = await rt.execInMember(id, ['tc', '-s', 'qdisc', 'show', 'dev', await shapedDev(id)]);
            return Number(
              /qdisc pfifo 2: parent 1:2 limit 0p\s+Sent \d+ bytes \d+ pkt \(dropped (\d+)/.exec(q)?.[1] ?? 0,
            );
          };
          await new Promise((r) => setTimeout(r, 2000));
          const drops = [await droppedAt('p4'), await droppedAt('p1')];
          t.diagnostic(`cut p4 | p1: p4 dropped ${drops[0]}, p1 dropped ${drops[1]} in 2 s`);
          assert.ok(drops[0]! > 0 && drops[1]! > 0, `both ends drop: ${drops.join(', ')}`);
          await rt.kill('p1');
          await rt.restart('p1');
          const after = await addressOf('p1');
          t.diagnostic(`p1 at ${before}, after its restart at ${after}`);
          assert.match(await filtersFor(), classOf(after, '1:2'), 'p4 still cuts p1, at its new address');
          assert.equal(await rt.shaping.cut(['p4'], ['p1'], false), true);
          assert.match(
            await filtersFor(),
            classOf(after, remoteClassId(2)),
            'healed: p4 classes p1’s new address as fnal again',
          );
        } finally {
          await rt.teardown();
        }
        await nothingOfTheRunLeft(swarm);
      },
    );

    await subtest(
      'a host killed mid-run: exit 3 on time naming it, nothing acknowledged lost, nothing left on the others',
      async () => {
        const fnal = swarm.state.hosts.find((h) => h.dc === 'fnal')!;
        const file = withFaults(dir, 'no-faults', []);
        const out3 = join(dir, 'run-host-dies');
        const args = [
          'run',
          file,
          '--runtime',
          'swarm',
          '--rate',
          '200',
          '--duration',
          '20s',
          '--seed',
          '7',
          '--out',
          out3,
        ];
        const child = spawn(process.execPath, [RUN_JS, ...args], {
          env: { ...env, DOCKER_HOST: swarm.dockerHost },
        });
        let stderr = '';
        child.stdout.resume();
        const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
        // The host goes 5 s into the load (the progress line says when it starts).
        const loading = new Promise<void>((resolve) =>
          child.stderr.on('data', (b: Buffer) => {
            stderr += b.toString();
            if (/\] load\b/.test(stderr)) resolve();
          }),
        );
        await Promise.race([loading, exited]);
        await new Promise((r) => setTimeout(r, 5_000));
        const killed = spawnSync('docker', ['kill', fnal.name], { env: { ...process.env, DOCKER_HOST: '' } });
        assert.equal(killed.status, 0, String(killed.stderr));
        const t0 = performance.now();
        const code = await exited;
        t.diagnostic(
          `host ${fnal.name} killed; the run ended ${((performance.now() - t0) / 1000).toFixed(1)} s after`,
        );
        assert.equal(code, 3, stderr);
        const res = JSON.parse(readFileSync(join(out3, 'result.json'), 'utf8')) as RunResult;
        assert.equal(res.verdict, 'run-failed');
        assert.match(
          res.errors[0] ?? '',
          new RegExp(`swarm node ${fnal.name} \\(data center fnal\\) went away mid-run.*p1 counted as down`),
          res.errors.join('; '),
        );
        assert.ok(existsSync(join(out3, 'report.md')), 'report written');
        // The other data centers' writes were measured and checked: nothing they had acknowledged lost.
        assert.equal(res.writes.lost, 0);
        for (const dc of ['caltech', 'slac']) assert.ok((res.latency[dc]?.before?.count ?? 0) > 100, dc);
        const alive = swarm.state.hosts.filter((h) => h !== fnal);
        await nothingOfTheRunLeft({ ...swarm, state: { ...swarm.state, hosts: alive } });
      },
    );
    passed = !subtestFailed;
  } finally {
    const down = await runCli(['swarm', 'down'], env);
    // A failed run's reports (events.jsonl, result.json) stay for a look: its JSON on stdout is
    // cut short in the assertion's message, and a CI run's failure here once left nothing else.
    if (passed) rmSync(dir, { recursive: true, force: true });
    else t.diagnostic(`the runs' reports are kept in ${dir}`);
    assert.equal(down.code, 0, down.stderr);
    const left = await findSwarmResources();
    assert.deepEqual([...left.hosts, ...left.networks], [], 'nothing of the swarm left');
  }
});

/** The test's topology with other faults, written to `dir`/`name`.yaml; its path. */
function withFaults(dir: string, name: string, faults: ReadonlyArray<Record<string, string>>): string {
  const topo = parse(readFileSync(TOPOLOGY, 'utf8')) as { scenario: Record<string, unknown> };
  topo.scenario['faults'] = faults;
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, stringify(topo));
  return file;
}

/** Nothing of a run on any host: no service, network, container or volume. */
async function nothingOfTheRunLeft(swarm: SwarmUpResult): Promise<void> {
  for (const h of swarm.state.hosts) {
    const d: Docker = engineAt(h.dockerHost);
    assert.deepEqual(await swarmLeftovers(d, h.role === 'manager'), [], h.name);
  }
}
