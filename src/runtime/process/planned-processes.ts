// A target's member plan as child processes of the harness: every port a free one on loopback,
// each member's files and data in a directory of the run, peers in other data centers reached
// through the delay relay (at an address of each ordered pair where the target keeps its port
// numbers: pair-host.ts), and every member dying with the harness however the harness dies (its
// stdin closed, or a parent-death signal under setpriv). A member that needs an /etc/hosts of its
// own gets one in a mount namespace of its own (own-etc-hosts.ts).
import { access, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { NodeId } from '../../vocabulary/names.js';
import type { Dial, ShapePlan } from '../../shaping/shaper.js';
import type { RelayedNode } from '../../shaping/shaper.js';
import type { Topology } from '../../topology/topology.js';
import {
  runPlacement,
  THIS_CLI,
  type MemberKind,
  type MemberPlan,
  type PlannedMember,
  type Placement,
} from '../../targets/member-plan.js';
import type { Target } from '../../targets/target.js';
import { pairHost } from '../../targets/pair-host.js';
import { freePorts } from '../../util/free-port.js';
import { childNodeArgs } from '../../util/child-node-args.js';
import { MemberProcesses, type MemberSpec, type ProcessMembers } from './member-processes.js';
import { ownEtcHosts, withOwnEtcHosts, type OwnEtcHosts } from './own-etc-hosts.js';
import { startPlan } from '../start-order.js';

const HOST = '127.0.0.1';
const RUN_JS = fileURLToPath(new URL('../../../../bin/run.js', import.meta.url));
const SETPRIV = '/usr/bin/setpriv';
/** A member asked to stop (stdin closed, or SIGTERM) is killed after this long. */
const STOP_GRACE_MS = 5_000;

export interface PlannedProcessOptions {
  readonly topology: Topology;
  readonly seed: number;
  readonly fsync: boolean;
  readonly oracle?: string;
  readonly targetOption?: string;
  /** Installs the run's shaping once the members' ports are known; resolves with the dial table. */
  readonly shape: (members: readonly RelayedNode[], plan: ShapePlan) => Promise<Dial>;
}

/**
 * Why the target's members cannot run as processes of this machine for this user (what is
 * missing, what works instead), or undefined when they can: asked before a run starts anything.
 */
export async function cannotRunHere(target: Target): Promise<string | undefined> {
  const missing = await target.members.missingHere?.();
  if (missing !== undefined) return missing;
  if (target.members.stop !== 'stdin') {
    const ok = await access(SETPRIV).then(
      () => true,
      () => false,
    );
    if (!ok)
      return `members that read no stdin die with the harness under setpriv (${SETPRIV} is missing): install util-linux`;
  }
  if (!target.members.ownEtcHosts) return undefined;
  const probe = await ownEtcHosts();
  return 'problem' in probe ? `${target.name} ${probe.problem}` : undefined;
}

/** Starts the target's members as processes; resolves once the plan's start (and afterStart) is done. */
export async function startPlannedProcesses(
  target: Target,
  o: PlannedProcessOptions,
): Promise<ProcessMembers> {
  const why = await cannotRunHere(target);
  if (why !== undefined) throw new Error(why);
  const kind = target.members;
  const t = o.topology;
  const dir = await mkdtemp(join(tmpdir(), `pole-bench-${target.name}-`));
  let procs: MemberProcesses | undefined;
  try {
    const ports = await portsOnLoopback(t, kind);
    const placement: Placement = {
      ...runPlacement(t, o),
      onThisMachine: true,
      portsOf: (id) => known(ports, id),
      bindHost: HOST,
      hostOf: () => HOST,
      routes: 'per-pair',
      shape: (members, p) =>
        o.shape(members, {
          direction: p.direction,
          ...(p.keepPorts
            ? { listenAt: (from, to, _port, at) => ({ host: pairHost(t, from, to), port: at.port }) }
            : {}),
          ...(p.retryConnectMs !== undefined ? { retryConnectMs: p.retryConnectMs } : {}),
        }),
      configPath: (name) => join(dir, 'config', name),
      dataDir: (id) => join(dir, 'data', id),
    };
    const plan = await target.planMembers(placement);
    const hosts = kind.ownEtcHosts ? await ownEtcHosts() : undefined;
    const specs = await writeMembers(
      dir,
      placement,
      kind,
      plan,
      hosts && 'ok' in hosts ? hosts.ok : undefined,
    );
    const members = new MemberProcesses(specs);
    procs = members;
    const clientAddress = (id: NodeId) => ({ host: HOST, port: known(ports, id).client! });
    await startPlan(
      plan,
      async (ids) => {
        await Promise.all(ids.map((id) => members.start(id)));
      },
      {
        get events() {
          return members.events;
        },
        waitFor: (pred, timeoutMs, since) => members.waitFor(pred, timeoutMs, since),
        isRunning: (id) => members.isRunning(id),
        record: (e) => members.record(e),
        clientAddress,
      },
      kind.startTimeoutMs,
    );
    return members.asMembers({
      clientAddress,
      httpAddress: (id) => {
        const port = known(ports, id).http;
        return port === undefined ? undefined : { host: HOST, port };
      },
      afterStop: () => removeRunDir(dir),
    });
  } catch (err) {
    await procs?.stop();
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

/** Every port of every member a free one of this machine. */
async function portsOnLoopback(t: Topology, kind: MemberKind): Promise<Map<NodeId, Record<string, number>>> {
  const names = Object.keys(kind.ports);
  const free = await freePorts(t.nodes.length * names.length);
  return new Map(
    t.nodes.map((n, i) => [
      n.id,
      Object.fromEntries(names.map((name, j) => [name, free[i * names.length + j]!])),
    ]),
  );
}

function known<T>(m: ReadonlyMap<NodeId, T>, id: NodeId): T {
  const v = m.get(id);
  if (v === undefined) throw new Error(`no member ${id}`);
  return v;
}

/** The plan's files and data directories on disk, and each member's command line. */
async function writeMembers(
  dir: string,
  p: Placement,
  kind: MemberKind,
  plan: MemberPlan,
  hosts: OwnEtcHosts | undefined,
): Promise<MemberSpec[]> {
  await mkdir(join(dir, 'config'), { recursive: true });
  for (const f of plan.files) await writeFile(p.configPath(f.name), f.text);
  const specs: MemberSpec[] = [];
  for (const m of plan.members) {
    const data = p.dataDir(m.id);
    // etcd refuses a data directory others may read.
    await mkdir(data, { recursive: true, mode: 0o700 });
    for (const f of m.dataFiles ?? []) await writeFile(join(data, f.name), f.text);
    let argv = commandOf(m);
    if (m.etcHosts !== undefined) {
      if (!hosts) throw new Error(`${m.id} needs an /etc/hosts of its own, and its target did not say so`);
      const file = join(dir, 'config', `${m.id}.etc-hosts`);
      await writeFile(file, ['127.0.0.1 localhost', ...m.etcHosts, ''].join('\n'));
      argv = withOwnEtcHosts(hosts, file, argv);
    }
    // A member that reads no stdin cannot notice the harness die: the kernel kills it then.
    if (kind.stop !== 'stdin') argv = [SETPRIV, '--pdeathsig', 'KILL', '--', ...argv];
    specs.push({
      id: m.id,
      launch: { command: argv[0]!, args: argv.slice(1), env: { ...process.env, ...m.env } },
      translate: m.translate,
      stopsWithStdin: kind.stop === 'stdin',
      stopGraceMs: STOP_GRACE_MS,
      isStarted: (e) => e.ev === 'started',
      startTimeoutMs: kind.startTimeoutMs,
      ...(kind.keepsLog ? { logFile: join(dir, `${m.id}.log`) } : {}),
    });
  }
  return specs;
}

/** The member's command line: this CLI is this Node with this build's entry point. */
function commandOf(m: PlannedMember): string[] {
  if (m.program === THIS_CLI) return [process.execPath, ...childNodeArgs(), RUN_JS, ...m.args];
  return [m.program, ...m.args];
}

/** POLE_BENCH_KEEP_MEMBER_DIR=1 keeps the members' configs, data and full logs to look at. */
async function removeRunDir(dir: string): Promise<void> {
  if (process.env.POLE_BENCH_KEEP_MEMBER_DIR === '1') process.stderr.write(`kept ${dir}\n`);
  else await rm(dir, { recursive: true, force: true });
}
