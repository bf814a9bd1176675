// The harness's self-check: how busy the machine was while the load ran, and who made it busy
// (the nodes, the load agents, the harness with its relay thread, anything else). On a 2-core
// machine, a busy CPU turns into queueing that every latency figure includes, so a run says when
// its figures cannot be taken at face value. Linux /proc only; elsewhere nothing is sampled.
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { processCpuTicks, USER_HZ } from './proc-cpu.js';

/** Above this share of all cores busy, queueing for CPU adds to every figure (the run says so). */
export const BUSY_WARN_PCT = 50;

/** A process to sample, and the name it has in the report (a node id, a data center's agent). */
export interface CpuProcess {
  readonly pid: number;
  readonly label: string;
}

export type CpuGroups = Readonly<Record<string, () => readonly CpuProcess[]>>;

export interface CpuSample {
  /** ms since the sampler started. */
  readonly atMs: number;
  /** /proc/stat: busy and total ticks over all cores. */
  readonly busy: number;
  readonly total: number;
  /** pid → utime + stime ticks, per group. */
  readonly groups: Readonly<Record<string, ReadonlyMap<number, number>>>;
  /** pid → label, for the processes seen in this sample (a restarted node keeps its label). */
  readonly labels?: ReadonlyMap<number, string>;
}

export interface CpuUse {
  readonly pctOfCore: number;
  /** µs of CPU per write acknowledged during the window; null when none was. */
  readonly usPerWrite: number | null;
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
  readonly processes: readonly (CpuUse & { readonly group: string; readonly label: string })[];
  /** Whatever else the machine ran meanwhile, % of one core. */
  readonly otherPctOfCore: number | null;
  /** Of the harness's share, the delay relay's own threads, % of one core (null: no relay). */
  readonly shapingPctOfCore: number | null;
  readonly shapingUsPerWrite: number | null;
  /** Set when the machine was too busy for the latency figures to be taken at face value. */
  readonly warning: string | null;
}

/** Turns a series of samples into the report (pure: tested on made-up samples). */
export function cpuReport(
  samples: readonly CpuSample[],
  cores: number,
  /** CPU ms the shaping's threads had used at the first and the last sample. */
  shapingCpuMs?: { readonly from: number; readonly to: number },
  ackedWrites = 0,
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
    };
  const windowS = (last.atMs - first.atMs) / 1000;
  const machineBusyPct = (100 * (last.busy - first.busy)) / (last.total - first.total);
  let peakBusyPct = 0;
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1]!;
    const b = samples[i]!;
    if (b.total > a.total)
      peakBusyPct = Math.max(peakBusyPct, (100 * (b.busy - a.busy)) / (b.total - a.total));
  }
  // Per pid, what it used between the first and the last sample it was seen in: processes that
  // start or end during the window (a killed and restarted node) count for the time they ran.
  const use = (ticks: number): CpuUse => ({
    pctOfCore: (100 * ticks) / USER_HZ / windowS,
    usPerWrite: ackedWrites > 0 ? ((ticks / USER_HZ) * 1e6) / ackedWrites : null,
  });
  const groups: Record<string, CpuUse & { processes: number }> = {};
  const processes: (CpuUse & { group: string; label: string })[] = [];
  let ours = 0;
  for (const name of Object.keys(last.groups)) {
    const seen = new Map<number, { from: number; to: number; label: string | undefined }>();
    for (const s of samples)
      for (const [pid, ticks] of s.groups[name] ?? new Map<number, number>()) {
        const e = seen.get(pid);
        if (e) e.to = ticks;
        else seen.set(pid, { from: ticks, to: ticks, label: s.labels?.get(pid) });
      }
    let ticks = 0;
    const byLabel = new Map<string, number>();
    for (const e of seen.values()) {
      ticks += e.to - e.from;
      if (e.label !== undefined) byLabel.set(e.label, (byLabel.get(e.label) ?? 0) + e.to - e.from);
    }
    ours += ticks;
    groups[name] = { ...use(ticks), processes: seen.size };
    for (const [label, t] of [...byLabel].sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true })))
      processes.push({ group: name, label, ...use(t) });
  }
  const busyCores = ((last.busy - first.busy) / USER_HZ / windowS) * 100;
  const otherPctOfCore = Math.max(0, busyCores - (100 * ours) / USER_HZ / windowS);
  const warning =
    machineBusyPct > BUSY_WARN_PCT
      ? `the machine was ${machineBusyPct.toFixed(0)} % busy during the load (all ${cores} cores; ` +
        `busiest second ${peakBusyPct.toFixed(0)} %), above the ${BUSY_WARN_PCT} % under which queueing for CPU ` +
        `stays small: every latency figure includes some of it`
      : null;
  // ms of CPU per s of window is ‰ of one core: / 10 makes it %.
  const shapingMs = shapingCpuMs ? shapingCpuMs.to - shapingCpuMs.from : null;
  const shapingPctOfCore = shapingMs !== null ? shapingMs / 10 / windowS : null;
  const shapingUsPerWrite = shapingMs !== null && ackedWrites > 0 ? (shapingMs * 1e3) / ackedWrites : null;
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
    warning,
  };
}

async function machineTicks(): Promise<{ busy: number; total: number } | null> {
  try {
    const line = (await readFile('/proc/stat', 'utf8')).split('\n', 1)[0]!;
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already in user)
    const total = v.slice(0, 8).reduce((a, b) => a + (b || 0), 0);
    const idle = (v[3] ?? 0) + (v[4] ?? 0);
    return { busy: total - idle, total };
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

  private shapingFrom: number | null = null;
  /** The shaping's CPU ms at the start and the end of the window, once stopped. */
  private shaping: { from: number; to: number } | undefined;

  constructor(
    private readonly groups: CpuGroups,
    /** CPU ms of the shaping's threads so far (the relay), read at the start and the end. */
    private readonly shapingCpuMs: () => Promise<number | null> = () => Promise.resolve(null),
    private readonly everyMs = 1000,
  ) {}

  async start(): Promise<void> {
    this.t0 = performance.now();
    this.shapingFrom = await this.shapingCpuMs().catch(() => null);
    await this.sample();
    this.timer = setInterval(() => {
      this.busy = this.busy.then(() => this.sample());
    }, this.everyMs);
    this.timer.unref();
  }

  /** Ends the sampling; `ackedWrites` (acknowledged during the window) gives the per-write costs. */
  async stop(ackedWrites = 0): Promise<CpuReport> {
    clearInterval(this.timer);
    await this.busy;
    await this.sample();
    const to = this.shapingFrom === null ? null : await this.shapingCpuMs().catch(() => null);
    if (this.shapingFrom !== null && to !== null) this.shaping = { from: this.shapingFrom, to };
    return this.report(ackedWrites);
  }

  /**
   * The report of the window sampled, with the writes to divide by: the writes sent during the
   * load are known only once the agents have drained them, after the window.
   */
  report(ackedWrites: number): CpuReport {
    return cpuReport(this.samples, availableParallelism(), this.shaping, ackedWrites);
  }

  private async sample(): Promise<void> {
    const m = await machineTicks();
    if (!m) return;
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
    this.samples.push({ atMs: performance.now() - this.t0, ...m, groups, labels });
  }
}
