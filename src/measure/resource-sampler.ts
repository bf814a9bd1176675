// What every process of a run holds over time: resident memory, open files and threads, sampled
// from /proc every few seconds while the load runs. A soak reads its "no leak" verdict here: a
// process whose memory or open files keep climbing under a steady load and repeated faults leaks,
// and it will eventually fall over in production however good its latency looked.
//
// Growth is judged per process (a restarted node is a new process, so a kill does not read as a
// drop), only for processes sampled long enough to tell a trend from start-up: the first minute
// of a process's samples (JIT, heap sizing, catching up after a restart) is not its baseline.
// Linux /proc only; elsewhere nothing is sampled.
import { readFile, readdir } from 'node:fs/promises';
import type { CpuGroups } from './cpu-sampler.js';
import { median } from '../util/spread.js';

/** Below this many ms of samples a process's growth is not judged (null). */
export const MIN_JUDGED_MS = 5 * 60_000;
/** Samples in a process's first this-many ms are start-up, not its baseline. */
export const STARTUP_MS = 60_000;
/** Points kept per process series in the result (evenly thinned; growth uses every sample). */
export const SERIES_POINTS = 60;

export interface ResourceUse {
  readonly rssMiB: number;
  readonly fds: number;
  readonly threads: number;
}

export interface ResourceSample extends ResourceUse {
  /** ms since the sampler started. */
  readonly atMs: number;
  readonly pid: number;
  readonly group: string;
  readonly label: string;
}

export interface ProcessResources {
  readonly group: string;
  /** A node id, a data center's agent, "harness". */
  readonly label: string;
  readonly pid: number;
  /** Seconds from the sampler's start to this process's first and last sample. */
  readonly fromS: number;
  readonly toS: number;
  readonly first: ResourceUse;
  readonly last: ResourceUse;
  readonly peak: ResourceUse;
  /** Median of the last quarter of its samples minus its baseline; null: sampled too briefly. */
  readonly rssGrowthMiB: number | null;
  readonly fdGrowth: number | null;
  readonly threadGrowth: number | null;
  /** Over its life (seconds from the sampler's start), thinned to SERIES_POINTS. */
  readonly series: readonly (ResourceUse & { readonly tS: number })[];
}

export interface ResourceReport {
  readonly sampled: boolean;
  readonly everyS: number;
  /** Long-lived processes first (by group, label), then in order of start. */
  readonly processes: readonly ProcessResources[];
  /** The largest growth over every judged process; null when none was judged. */
  readonly maxRssGrowthMiB: number | null;
  readonly maxFdGrowth: number | null;
  readonly maxThreadGrowth: number | null;
  /** How many processes were judged (sampled at least MIN_JUDGED_MS). */
  readonly judged: number;
  /**
   * The same maxima per group (harness, nodes, agents): a node holds by design what a harness must
   * not (its log since its last snapshot, its table of applied requests), so each gets its own bound.
   */
  readonly groups: Readonly<Record<string, GroupGrowth>>;
}

export interface GroupGrowth {
  readonly maxRssGrowthMiB: number | null;
  readonly maxFdGrowth: number | null;
  readonly maxThreadGrowth: number | null;
  readonly judged: number;
}

/** Turns samples into the report (pure: tested on made-up samples). */
export function resourceReport(samples: readonly ResourceSample[], everyMs: number): ResourceReport {
  const byPid = new Map<number, ResourceSample[]>();
  for (const s of samples) {
    const list = byPid.get(s.pid);
    if (list) list.push(s);
    else byPid.set(s.pid, [s]);
  }
  const processes: ProcessResources[] = [];
  for (const [pid, list] of byPid) {
    const first = list[0]!;
    const last = list.at(-1)!;
    const judged = last.atMs - first.atMs >= MIN_JUDGED_MS;
    const grown = (f: (u: ResourceUse) => number): number | null => {
      if (!judged) return null;
      const settled = list.filter((s) => s.atMs - first.atMs >= STARTUP_MS);
      const quarter = Math.max(1, Math.floor(settled.length / 4));
      return median(settled.slice(-quarter).map(f)) - median(settled.slice(0, quarter).map(f));
    };
    const step = Math.max(1, Math.ceil(list.length / SERIES_POINTS));
    const kept = list.filter((_, i) => i % step === 0 || i === list.length - 1);
    processes.push({
      group: first.group,
      label: first.label,
      pid,
      fromS: first.atMs / 1000,
      toS: last.atMs / 1000,
      first: use(first),
      last: use(last),
      peak: {
        rssMiB: Math.max(...list.map((s) => s.rssMiB)),
        fds: Math.max(...list.map((s) => s.fds)),
        threads: Math.max(...list.map((s) => s.threads)),
      },
      rssGrowthMiB: grown((u) => u.rssMiB),
      fdGrowth: grown((u) => u.fds),
      threadGrowth: grown((u) => u.threads),
      series: kept.map((s) => ({
        tS: round1(s.atMs / 1000),
        rssMiB: round1(s.rssMiB),
        fds: s.fds,
        threads: s.threads,
      })),
    });
  }
  processes.sort(
    (a, b) => a.fromS - b.fromS || a.group.localeCompare(b.group) || a.label.localeCompare(b.label),
  );
  const growth = (list: readonly ProcessResources[]): GroupGrowth => {
    const judged = list.filter((p) => p.rssGrowthMiB !== null);
    const max = (f: (p: ProcessResources) => number | null): number | null =>
      judged.length === 0 ? null : Math.max(...judged.map((p) => f(p) as number));
    return {
      maxRssGrowthMiB: max((p) => p.rssGrowthMiB),
      maxFdGrowth: max((p) => p.fdGrowth),
      maxThreadGrowth: max((p) => p.threadGrowth),
      judged: judged.length,
    };
  };
  const groups: Record<string, GroupGrowth> = {};
  for (const g of new Set(processes.map((p) => p.group)))
    groups[g] = growth(processes.filter((p) => p.group === g));
  return { sampled: processes.length > 0, everyS: everyMs / 1000, processes, ...growth(processes), groups };
}

export const emptyResourceReport = (everyMs: number): ResourceReport => resourceReport([], everyMs);

/** RSS, open files and threads of one process; null when it is gone (or this is not Linux). */
export async function processResources(pid: number): Promise<ResourceUse | null> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const rssKb = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? NaN);
    const threads = Number(/^Threads:\s+(\d+)/m.exec(status)?.[1] ?? NaN);
    const fds = (await readdir(`/proc/${pid}/fd`)).length;
    if (!Number.isFinite(rssKb) || !Number.isFinite(threads)) return null;
    return { rssMiB: rssKb / 1024, fds, threads };
  } catch {
    return null;
  }
}

/** Samples every `everyMs` from start() to stop(); a sample reads two small /proc entries a process. */
export class ResourceSampler {
  private readonly samples: ResourceSample[] = [];
  private timer: NodeJS.Timeout | undefined;
  private t0 = 0;
  private busy: Promise<void> = Promise.resolve();

  constructor(
    private readonly groups: CpuGroups,
    private readonly everyMs = 5_000,
  ) {}

  async start(): Promise<void> {
    this.t0 = performance.now();
    await this.sample();
    this.timer = setInterval(() => {
      this.busy = this.busy.then(() => this.sample());
    }, this.everyMs);
    this.timer.unref();
  }

  async stop(): Promise<ResourceReport> {
    clearInterval(this.timer);
    await this.busy;
    await this.sample();
    return this.report();
  }

  report(): ResourceReport {
    return resourceReport(this.samples, this.everyMs);
  }

  private async sample(): Promise<void> {
    const atMs = performance.now() - this.t0;
    for (const [group, list] of Object.entries(this.groups))
      for (const { pid, label } of list()) {
        const u = await processResources(pid);
        if (u) this.samples.push({ atMs, pid, group, label, ...u });
      }
  }
}

function use(s: ResourceUse): ResourceUse {
  return { rssMiB: s.rssMiB, fds: s.fds, threads: s.threads };
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}
