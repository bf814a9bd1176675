// src/measure/: what a run measures about itself besides the writes: CPU of the machine and of every
// process (containers too), memory, files and threads, the warm-up and the node floor's calibration.
//
// The harness's self-check: how busy the machine was while the load ran, and who made it busy
// (the nodes, the load agents, the harness with its relay thread, the kernel outside any process,
// the hypervisor, anything else). On a 2-core machine, a busy CPU turns into queueing that every
// latency figure includes, so a run says when its figures cannot be taken at face value. Linux
// /proc only; elsewhere nothing is sampled.
//
// One basis for every figure: clock ticks, as /proc/stat counts the machine's and /proc/<pid>/stat
// a process's. A share is ticks over the ticks all cores had in the same window (/proc/stat's
// total), never over wall time: a residual between a tick count and wall time mixes two clocks
// and showed 15.9 % "else" where the ticks left 12.8 % busy in all.
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { processCpuTicks, USER_HZ } from './proc-cpu.js';
import { wallToPerfNow } from '../util/wall-clock.js';
import type { ShapingUsage } from '../vocabulary/names.js';

/** Above this share of all cores busy, queueing for CPU adds to every figure (the run says so). */
export const BUSY_WARN_PCT = 50;

/** A process to sample, and the name it has in the report (a node id, a data center's agent). */
export interface CpuProcess {
  readonly pid: number;
  readonly label: string;
}

export type CpuGroups = Readonly<Record<string, () => readonly CpuProcess[]>>;

/**
 * CPU of something this harness cannot read in /proc by pid (a container on a swarm node, read by
 * that node's Docker), in the same ticks: what it used so far, under a key that stays the same
 * across readings (a container id).
 */
export interface RemoteCpu {
  readonly key: string;
  readonly group: string;
  readonly label: string;
  readonly ticks: number;
  /** On this machine's kernel: its ticks are part of what /proc/stat counted here ("ours"). */
  readonly onThisMachine: boolean;
}

/** Where remote readings come from (the report says so), and a reading. */
export interface RemoteCpuSource {
  readonly what: string;
  read(): Promise<readonly RemoteCpu[]>;
}

/** /proc/stat's first line (all cores together), ticks since boot, and how many cores it sums. */
export interface ProcStat {
  readonly cpus: number;
  readonly user: number;
  readonly nice: number;
  readonly system: number;
  readonly idle: number;
  readonly iowait: number;
  readonly irq: number;
  readonly softirq: number;
  readonly steal: number;
}

export interface CpuSample {
  /** ms since the load started (since the sampler started when it was given no start). */
  readonly atMs: number;
  /** /proc/stat: busy and total ticks over all cores. */
  readonly busy: number;
  readonly total: number;
  /** /proc/stat's categories, for the breakdown (absent: only busy and total were read). */
  readonly stat?: ProcStat;
  /** pid → utime + stime ticks, per group. */
  readonly groups: Readonly<Record<string, ReadonlyMap<number, number>>>;
  /** pid → label, for the processes seen in this sample (a restarted node keeps its label). */
  readonly labels?: ReadonlyMap<number, string>;
  /**
   * Stand-in pids (below 0) of remote readings whose ticks another machine's kernel counted: not
   * part of this machine's busy share.
   */
  readonly elsewhere?: ReadonlySet<number>;
}

export interface CpuUse {
  readonly pctOfCore: number;
  /** µs of CPU per write acknowledged during the window; null when none was. */
  readonly usPerWrite: number | null;
}

/** /proc/stat's categories over the window, % of all cores (busy + idle + iowait = 100). */
export interface MachineCpu {
  readonly busyPct: number;
  /** user and nice together: the agents may run niced. */
  readonly userPct: number;
  readonly systemPct: number;
  readonly irqPct: number;
  readonly softirqPct: number;
  /** Time the hypervisor gave this VM's cores to someone else (counted as busy). */
  readonly stealPct: number;
  /** Idle with a disk request outstanding (not busy). */
  readonly iowaitPct: number;
}

/**
 * Who made the machine busy, % of all cores, on /proc/stat's ticks:
 * oursPct + kernelPct + stealPct + notOursPct − overlapPct = the machine's busyPct.
 */
export interface CpuShares {
  /** utime + stime of every process of the run (harness, nodes, agents): their syscalls included. */
  readonly oursPct: number;
  /** irq + softirq: the kernel's work outside any process's own accounting (loopback: our sockets). */
  readonly kernelPct: number;
  readonly stealPct: number;
  /** busy − ours − kernel − steal, at least 0: other processes and kernel threads (jbd2, kworker). */
  readonly notOursPct: number;
  /**
   * What ours + kernel + steal exceed busy by: counted twice. With tick-based accounting (no
   * CONFIG_IRQ_TIME_ACCOUNTING) a softirq served in a process's context is in its stime too.
   */
  readonly overlapPct: number;
}

/** One sampled second of the machine. */
export interface CpuSecond {
  /** Seconds from the load start to the start of this second's sample. */
  readonly t: number;
  /** % of all cores. */
  readonly busyPct: number;
  readonly stealPct: number;
}

export interface CpuReport {
  readonly sampled: boolean;
  readonly windowS: number;
  readonly cores: number;
  /** Share of all cores busy over the window, %, and the busiest one-second sample. */
  readonly machineBusyPct: number | null;
  readonly peakBusyPct: number | null;
  /** Writes acknowledged during the window, the denominator of every usPerWrite. */
  readonly ackedWrites: number;
  /** Per group, % of one core (100 = one core flat out), and how many processes it had. */
  readonly groups: Readonly<Record<string, CpuUse & { readonly processes: number }>>;
  /** Per labelled process (a node, an agent), in group order; a restarted node is one entry. */
  readonly processes: readonly (CpuUse & {
    readonly group: string;
    readonly label: string;
    /** Set where it ran on another machine than the harness (its share is not in the machine's). */
    readonly elsewhere?: boolean;
  })[];
  /**
   * Where the figures of containers this harness cannot read by pid came from, read at the
   * window's start and end (swarm: each node's Docker through the run's fault helpers); null: none.
   */
  readonly remote?: string | null;
  /** Remote containers read only once (killed or started during the load): no figure. */
  readonly unread?: readonly string[];
  /**
   * Whatever else the machine ran meanwhile, % of one core: shares.notOursPct × cores (within
   * result@7 it was busy ticks against wall time less ours, which also held irq, softirq and steal).
   */
  readonly otherPctOfCore: number | null;
  /** Of the harness's share, the delay relay's own threads, % of one core (null: no relay). */
  readonly shapingPctOfCore: number | null;
  readonly shapingUsPerWrite: number | null;
  /**
   * Chunks the relay released, and wake-ups of its two threads, per acknowledged write (null: no
   * relay in the harness; absent from files written before).
   */
  readonly shapingChunksPerWrite?: number | null;
  readonly shapingWakesPerWrite?: number | null;
  /** Set when the machine was too busy for the latency figures to be taken at face value. */
  readonly warning: string | null;
  /** /proc/stat's categories (added within result@7: absent from older files; null: not read). */
  readonly machine?: MachineCpu | null;
  /** Who made the machine busy (added within result@7; null: /proc/stat's categories not read). */
  readonly shares?: CpuShares | null;
  /** Busy and steal per sampled second (added within result@7). */
  readonly perSecond?: readonly CpuSecond[];
}

/** Reads /proc/stat's text; null when its first line is not the all-cores "cpu" line. */
export function parseProcStat(text: string): ProcStat | null {
  const lines = text.split('\n');
  const head = lines[0]?.trim().split(/\s+/) ?? [];
  if (head[0] !== 'cpu') return null;
  // user nice system idle iowait irq softirq steal guest guest_nice; guest time is already in
  // user (and guest_nice in nice), so it is not added again. Old kernels stop before steal.
  const v = head.slice(1).map((x) => Number(x) || 0);
  return {
    cpus: Math.max(1, lines.filter((l) => /^cpu\d+\s/.test(l)).length),
    user: v[0] ?? 0,
    nice: v[1] ?? 0,
    system: v[2] ?? 0,
    idle: v[3] ?? 0,
    iowait: v[4] ?? 0,
    irq: v[5] ?? 0,
    softirq: v[6] ?? 0,
    steal: v[7] ?? 0,
  };
}

/** Busy and total ticks of a /proc/stat reading: busy is all but idle and iowait. */
export function statTicks(s: ProcStat): { busy: number; total: number } {
  const total = s.user + s.nice + s.system + s.idle + s.iowait + s.irq + s.softirq + s.steal;
  return { busy: total - s.idle - s.iowait, total };
}

/** Turns a series of samples into the report (pure: tested on made-up samples). */
export function cpuReport(
  samples: readonly CpuSample[],
  /** How many cores, when no sample says (/proc/stat's count of cpuN lines wins). */
  cores: number,
  /** What the shaping's threads had done at the first and the last sample. */
  shaping?: { readonly from: ShapingUsage; readonly to: ShapingUsage },
  ackedWrites = 0,
  remote: string | null = null,
): CpuReport {
  const first = samples[0];
  const last = samples.at(-1);
  if (!first || !last || last === first || last.total <= first.total)
    return {
      sampled: false,
      windowS: 0,
      cores,
      machineBusyPct: null,
      peakBusyPct: null,
      ackedWrites,
      groups: {},
      processes: [],
      otherPctOfCore: null,
      shapingPctOfCore: null,
      shapingUsPerWrite: null,
      warning: null,
      machine: null,
      shares: null,
      perSecond: [],
    };
  cores = last.stat?.cpus ?? cores;
  const windowS = (last.atMs - first.atMs) / 1000;
  // Every share below is ticks over the ticks all cores had in the window: % of all cores, or,
  // over one core's part of them, % of one core.
  const allTicks = last.total - first.total;
  const pctOfAll = (ticks: number): number => (100 * ticks) / allTicks;
  const pctOfCore = (ticks: number): number => pctOfAll(ticks) * cores;
  const machineBusyPct = pctOfAll(last.busy - first.busy);
  let peakBusyPct = 0;
  const perSecond: CpuSecond[] = [];
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1]!;
    const b = samples[i]!;
    if (b.total <= a.total) continue;
    const busyPct = (100 * (b.busy - a.busy)) / (b.total - a.total);
    peakBusyPct = Math.max(peakBusyPct, busyPct);
    if (a.stat && b.stat)
      perSecond.push({
        t: Math.round(a.atMs) / 1000,
        busyPct: round2(busyPct),
        stealPct: round2((100 * (b.stat.steal - a.stat.steal)) / (b.total - a.total)),
      });
  }
  // Per pid, what it used between the first and the last sample it was seen in: processes that
  // start or end during the window (a killed and restarted node) count for the time they ran.
  const use = (ticks: number): CpuUse => ({
    pctOfCore: pctOfCore(ticks),
    usPerWrite: ackedWrites > 0 ? ((ticks / USER_HZ) * 1e6) / ackedWrites : null,
  });
  const groups: Record<string, CpuUse & { processes: number }> = {};
  const processes: (CpuUse & { group: string; label: string; elsewhere?: boolean })[] = [];
  const elsewhere = new Set(samples.flatMap((x) => [...(x.elsewhere ?? [])]));
  const unread: string[] = [];
  let ours = 0;
  const groupNames = [...new Set(samples.flatMap((x) => Object.keys(x.groups)))];
  for (const name of groupNames) {
    const seen = new Map<
      number,
      { from: number; to: number; fromMs: number; toMs: number; label: string | undefined }
    >();
    for (const s of samples)
      for (const [pid, ticks] of s.groups[name] ?? new Map<number, number>()) {
        const e = seen.get(pid);
        if (e) {
          e.to = ticks;
          e.toMs = s.atMs;
        } else
          seen.set(pid, { from: ticks, to: ticks, fromMs: s.atMs, toMs: s.atMs, label: s.labels?.get(pid) });
      }
    let ticks = 0;
    const byLabel = new Map<string, number>();
    const labelsElsewhere = new Set<string>();
    for (const [pid, e] of seen) {
      // A remote reading (pid below 0) is taken a few times only, not every second: its rate over
      // the span between its first and last reading stands for the whole window. Read once (a
      // member killed or started during the load), it says nothing.
      if (pid < 0) {
        if (e.toMs <= e.fromMs) {
          seen.delete(pid);
          if (e.label !== undefined) unread.push(e.label);
          continue;
        }
        e.to = e.from + ((e.to - e.from) * (last.atMs - first.atMs)) / (e.toMs - e.fromMs);
      }
      ticks += e.to - e.from;
      if (!elsewhere.has(pid)) ours += e.to - e.from;
      if (e.label !== undefined) {
        byLabel.set(e.label, (byLabel.get(e.label) ?? 0) + e.to - e.from);
        if (elsewhere.has(pid)) labelsElsewhere.add(e.label);
      }
    }
    if (seen.size === 0) continue;
    groups[name] = { ...use(ticks), processes: seen.size };
    for (const [label, t] of [...byLabel].sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true })))
      processes.push({
        group: name,
        label,
        ...use(t),
        ...(labelsElsewhere.has(label) ? { elsewhere: true } : {}),
      });
  }
  const machine = first.stat && last.stat ? machineCpu(first.stat, last.stat, allTicks) : null;
  const shares = machine ? cpuShares(machine, pctOfAll(ours)) : null;
  // Without /proc/stat's categories the kernel's and the hypervisor's parts are unknown: all of
  // what is not ours counts as else.
  const otherPctOfCore = shares
    ? shares.notOursPct * cores
    : Math.max(0, pctOfCore(last.busy - first.busy) - pctOfCore(ours));
  const warning =
    machineBusyPct > BUSY_WARN_PCT
      ? `the machine was ${machineBusyPct.toFixed(0)} % busy during the load (all ${cores} cores; ` +
        `busiest second ${peakBusyPct.toFixed(0)} %), above the ${BUSY_WARN_PCT} % under which queueing for CPU ` +
        `stays small: every latency figure includes some of it`
      : null;
  // The relay reports CPU ms: 10 ms is one tick.
  const shapingMs =
    shaping && shaping.from.cpuMs !== null && shaping.to.cpuMs !== null
      ? shaping.to.cpuMs - shaping.from.cpuMs
      : null;
  const shapingPctOfCore = shapingMs !== null ? pctOfCore(shapingMs / (1000 / USER_HZ)) : null;
  const shapingUsPerWrite = shapingMs !== null && ackedWrites > 0 ? (shapingMs * 1e3) / ackedWrites : null;
  // Chunks and wake-ups per write tell a relay that does more from one that pays more for each.
  const perWrite = (n: number | undefined): number | null =>
    n !== undefined && ackedWrites > 0 ? n / ackedWrites : null;
  const shapingChunksPerWrite = perWrite(shaping && shaping.to.chunks - shaping.from.chunks);
  const shapingWakesPerWrite = perWrite(shaping && shaping.to.wakes - shaping.from.wakes);
  return {
    sampled: true,
    windowS,
    cores,
    machineBusyPct,
    peakBusyPct,
    ackedWrites,
    groups,
    processes,
    otherPctOfCore,
    shapingPctOfCore,
    shapingUsPerWrite,
    shapingChunksPerWrite,
    shapingWakesPerWrite,
    warning,
    machine,
    shares,
    perSecond,
    remote,
    ...(unread.length > 0 ? { unread } : {}),
  };
}

function machineCpu(a: ProcStat, b: ProcStat, allTicks: number): MachineCpu {
  // iowait may step back (proc(5) says so): a category never counts below 0.
  const pct = (k: keyof ProcStat): number => Math.max(0, (100 * (b[k] - a[k])) / allTicks);
  return {
    busyPct: (100 * (statTicks(b).busy - statTicks(a).busy)) / allTicks,
    userPct: pct('user') + pct('nice'),
    systemPct: pct('system'),
    irqPct: pct('irq'),
    softirqPct: pct('softirq'),
    stealPct: pct('steal'),
    iowaitPct: pct('iowait'),
  };
}

/** `oursPct`: our processes' ticks, % of all cores. Each share is one of busy's, none counted as else twice. */
export function cpuShares(m: MachineCpu, oursPct: number): CpuShares {
  const kernelPct = m.irqPct + m.softirqPct;
  const accounted = oursPct + kernelPct + m.stealPct;
  return {
    oursPct,
    kernelPct,
    stealPct: m.stealPct,
    notOursPct: Math.max(0, m.busyPct - accounted),
    overlapPct: Math.max(0, accounted - m.busyPct),
  };
}

/** Per-second figures go to result.json, where 0.01 % is plenty. */
function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

async function machineTicks(): Promise<ProcStat | null> {
  try {
    return parseProcStat(await readFile('/proc/stat', 'utf8'));
  } catch {
    return null;
  }
}

/** Samples every `everyMs` from start() to stop(); each sample reads a few small /proc files. */
export class CpuSampler {
  private readonly samples: CpuSample[] = [];
  private timer: NodeJS.Timeout | undefined;
  private t0 = 0;
  private busy: Promise<void> = Promise.resolve();

  private shapingFrom: ShapingUsage | null = null;
  /** What the shaping had done at the start and the end of the window, once stopped. */
  private shaping: { from: ShapingUsage; to: ShapingUsage } | undefined;

  /** Stand-in pids of remote readings, by key (below 0: no real pid is). */
  private readonly remoteIds = new Map<string, number>();
  /** The last good reading of each remote key. */
  private readonly remoteLast = new Map<string, number>();

  constructor(
    private readonly groups: CpuGroups,
    /** What the shaping's threads (the relay's) have done so far, read at the start and the end. */
    private readonly shapingUsage: () => Promise<ShapingUsage | null> = () => Promise.resolve(null),
    private readonly everyMs = 1000,
    /**
     * Containers read elsewhere, at the window's start and end only: a reading asks every node's
     * Docker for each container's stats, too dear to do every second beside the load.
     */
    private readonly remote?: RemoteCpuSource,
  ) {}

  /** `originWallMs`: the wall-clock instant the samples' times count from (the load start). */
  async start(originWallMs?: number): Promise<void> {
    this.t0 = originWallMs === undefined ? performance.now() : wallToPerfNow(originWallMs);
    this.shapingFrom = await this.shapingUsage().catch(() => null);
    await this.sample(await this.readRemote());
    this.timer = setInterval(() => {
      this.busy = this.busy.then(() => this.sample());
    }, this.everyMs);
    this.timer.unref();
  }

  /** Ends the sampling; `ackedWrites` (acknowledged during the window) gives the per-write costs. */
  async stop(ackedWrites = 0): Promise<CpuReport> {
    clearInterval(this.timer);
    await this.busy;
    await this.sample(await this.readRemote());
    const to = this.shapingFrom === null ? null : await this.shapingUsage().catch(() => null);
    if (this.shapingFrom !== null && to !== null) this.shaping = { from: this.shapingFrom, to };
    return this.report(ackedWrites);
  }

  /**
   * The report of the window sampled, with the writes to divide by: the writes sent during the
   * load are known only once the agents have drained them, after the window.
   */
  report(ackedWrites: number): CpuReport {
    return cpuReport(
      this.samples,
      availableParallelism(),
      this.shaping,
      ackedWrites,
      this.remote?.what ?? null,
    );
  }

  /**
   * A sample with the remote readings, now (the run takes one two seconds before the load's end,
   * while the load agents still run: each ends with its schedule, and a container that has ended
   * reads as nothing).
   */
  async sampleRemoteNow(): Promise<void> {
    if (!this.remote) return;
    this.busy = this.busy.then(async () => this.sample(await this.readRemote()));
    await this.busy;
  }

  private async readRemote(): Promise<readonly RemoteCpu[]> {
    if (!this.remote) return [];
    const got = await this.remote.read().catch(() => []);
    // A reading below the last one of the same container is not a reading of it (a container
    // stopping reads 0): the last good one stands.
    return got.filter((r) => {
      const prev = this.remoteLast.get(r.key);
      if (prev !== undefined && r.ticks < prev) return false;
      this.remoteLast.set(r.key, r.ticks);
      return true;
    });
  }

  private async sample(remote: readonly RemoteCpu[] = []): Promise<void> {
    const m = await machineTicks();
    if (!m) return;
    // Stamped when the machine was read: the processes' reads follow within a few ms.
    const atMs = performance.now() - this.t0;
    const groups: Record<string, Map<number, number>> = {};
    const labels = new Map<number, string>();
    for (const [name, list] of Object.entries(this.groups)) {
      const map = new Map<number, number>();
      for (const { pid, label } of list()) {
        const t = await processCpuTicks(pid);
        if (t === null) continue;
        map.set(pid, t);
        labels.set(pid, label);
      }
      groups[name] = map;
    }
    const elsewhere = new Set<number>();
    for (const r of remote) {
      let pid = this.remoteIds.get(r.key);
      if (pid === undefined) this.remoteIds.set(r.key, (pid = -1 - this.remoteIds.size));
      (groups[r.group] ??= new Map()).set(pid, r.ticks);
      labels.set(pid, r.label);
      if (!r.onThisMachine) elsewhere.add(pid);
    }
    this.samples.push({ atMs, ...statTicks(m), stat: m, groups, labels, elsewhere });
  }
}
