// src/experiment/: suites of runs (`pole-bench suite`): the suite file and its cells, each repeat run as
// a `pole-bench run` child, resuming, and suite.json / suite.md with their charts.
//
// Runs a suite's cells one after another, each repeat as its own `pole-bench run` child process
// (a run owns its cluster, its guard and its clean-up; a run that breaks does not take the suite
// with it). Resumable: a cell's directory keeps its configuration hash, and a repeat whose
// result.json is there under the same hash is not run again; a cell whose configuration changed
// starts over. Ctrl-C, SIGTERM, a parent that goes away or the suite's deadline stop the run in
// progress (it cleans up as on its own Ctrl-C) and the suite, which the same command resumes.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { EXIT_CODES, readResultFile, type RunResult } from '../report/result.js';
import { loadTopologyForRun } from '../run/run-overrides.js';
import { InputError } from '../util/input-error.js';
import { runArgs, type Cell, type Suite } from './suite-file.js';

/** What a run may take beyond its scenario before the suite ends it (the run's own guard allows 5 min). */
const RUN_SLACK_MS = 7 * 60_000;
/** After a stop request, how long a run gets to clean up before it is killed. */
const STOP_GRACE_MS = 90_000;
/** A first guess at what a run costs beyond its scenario (start-up, checks), until runs are timed. */
const GUESSED_OVERHEAD_MS = 15_000;

export type RunStatus = 'done' | 'resumed' | 'failed' | 'not-run';

export interface SuiteRun {
  readonly cell: string;
  readonly repeat: number;
  readonly seed: number;
  /** Relative to the suite's output directory. */
  readonly dir: string;
  readonly status: RunStatus;
  /** The child's exit code (null: resumed or never run). */
  readonly exitCode: number | null;
  readonly verdict: RunResult['verdict'] | null;
  readonly wallMs: number | null;
  /** Why a run failed: the end of its stderr. */
  readonly error?: string;
}

export interface SuiteProgress {
  readonly total: number;
  /** Finished in this invocation or earlier (resumed). */
  readonly finished: number;
  readonly resumed: number;
  readonly failed: number;
  /** The run starting now, if any. */
  readonly current?: { readonly cell: string; readonly repeat: number };
  /** Estimated seconds left, from the scenario durations and the runs timed so far. */
  readonly etaS: number;
}

export interface SuiteRunOptions {
  readonly out: string;
  /** The pole-bench executable (bin/run.js). */
  readonly cli: string;
  readonly runtime?: string;
  readonly signal?: AbortSignal;
  readonly onProgress?: (p: SuiteProgress) => void;
}

export interface SuiteOutcome {
  readonly runs: readonly SuiteRun[];
  /** Each finished run's result, by "cell/repeat". */
  readonly results: ReadonlyMap<string, RunResult>;
  /** Set when the suite was stopped before its end. */
  readonly interrupted: string | null;
}

interface Planned {
  readonly cell: Cell;
  readonly repeat: number;
  readonly seed: number;
  readonly dir: string;
  readonly scenarioMs: number;
}

/** Each cell's parameters checked against its topology before any run starts (exit 2 on a bad one). */
export function planRuns(suite: Suite, out: string): Planned[] {
  const planned: Planned[] = [];
  for (const cell of suite.cells) {
    let scenarioMs: number;
    try {
      const p = cell.params;
      scenarioMs = loadTopologyForRun(cell.topology, {
        ...(p.target !== undefined ? { target: p.target } : {}),
        ...(p.oracle !== undefined ? { oracle: p.oracle } : {}),
        ...(p.rate !== undefined ? { rate: p.rate } : {}),
        ...(p.size !== undefined ? { size: p.size } : {}),
        ...(p.duration !== undefined ? { duration: p.duration } : {}),
        ...(p.killAt !== undefined ? { killAt: p.killAt } : {}),
        ...(p.share !== undefined ? { share: p.share } : {}),
        ...(p.preload !== undefined ? { preload: p.preload } : {}),
        ...(p.nemesisSeed !== undefined ? { nemesisSeed: p.nemesisSeed } : {}),
      }).scenario.durationMs;
    } catch (err) {
      if (err instanceof InputError)
        throw new InputError({ file: suite.file, field: `cell ${cell.id}`, problem: err.message });
      throw err;
    }
    for (let r = 0; r < suite.repeats; r++)
      planned.push({
        cell,
        repeat: r,
        seed: suite.seed + r,
        dir: join(out, 'cells', cell.id, `run-${r + 1}`),
        scenarioMs,
      });
  }
  return planned;
}

export async function runSuite(suite: Suite, o: SuiteRunOptions): Promise<SuiteOutcome> {
  const planned = planRuns(suite, o.out);
  await forgetChangedCells(suite, o.out);
  const runs: SuiteRun[] = [];
  const results = new Map<string, RunResult>();
  let interrupted: string | null = null;
  let timedWall = 0;
  let timedScenario = 0;
  const eta = (from: number): number => {
    const left = planned.slice(from).filter((p) => !results.has(key(p)));
    const scenario = left.reduce((s, p) => s + p.scenarioMs, 0);
    // Wall time per scenario time so far; before any run is timed, a guess at the overhead.
    const factor = timedScenario > 0 ? timedWall / timedScenario : NaN;
    const ms = Number.isFinite(factor) ? scenario * factor : scenario + left.length * GUESSED_OVERHEAD_MS;
    return Math.round(ms / 1000);
  };
  for (const p of planned) {
    const previous = await finishedResult(p);
    if (previous) results.set(key(p), previous);
  }
  const progress = (i: number, current?: Planned): void =>
    o.onProgress?.({
      total: planned.length,
      finished: results.size,
      resumed: runs.filter((r) => r.status === 'resumed').length,
      failed: runs.filter((r) => r.status === 'failed').length,
      ...(current ? { current: { cell: current.cell.id, repeat: current.repeat + 1 } } : {}),
      etaS: eta(i),
    });
  for (const [i, p] of planned.entries()) {
    const rel = relative(o.out, p.dir);
    const previous = results.get(key(p));
    if (previous) {
      runs.push({
        cell: p.cell.id,
        repeat: p.repeat + 1,
        seed: p.seed,
        dir: rel,
        status: 'resumed',
        exitCode: null,
        verdict: previous.verdict,
        wallMs: null,
      });
      continue;
    }
    if (interrupted !== null || o.signal?.aborted) {
      interrupted ??= String((o.signal?.reason as Error | undefined)?.message ?? 'stopped');
      runs.push({
        cell: p.cell.id,
        repeat: p.repeat + 1,
        seed: p.seed,
        dir: rel,
        status: 'not-run',
        exitCode: null,
        verdict: null,
        wallMs: null,
      });
      continue;
    }
    progress(i, p);
    await mkdir(join(o.out, 'cells', p.cell.id), { recursive: true });
    await writeFile(
      join(o.out, 'cells', p.cell.id, 'cell.json'),
      `${JSON.stringify({ configHash: p.cell.configHash, topology: p.cell.topology, params: p.cell.params }, null, 2)}\n`,
    );
    await rm(p.dir, { recursive: true, force: true });
    const started = Date.now();
    const child = await runChild(
      o.cli,
      runArgs(p.cell, {
        seed: p.seed,
        out: p.dir,
        thresholds: suite.thresholds,
        ...(o.runtime ? { runtime: o.runtime } : {}),
      }),
      p.scenarioMs + RUN_SLACK_MS,
      o.signal,
    );
    const wallMs = Date.now() - started;
    if (child.code === 2)
      throw new InputError({
        file: suite.file,
        field: `cell ${p.cell.id}`,
        problem: `pole-bench run refused it: ${child.stderr.trim()}`,
      });
    // Passed, a threshold failed, or suspect (exit 4): the run measured everything and wrote it.
    const result =
      child.code === 0 || child.code === 1 || child.code === EXIT_CODES.suspect
        ? await finishedResult(p)
        : undefined;
    if (result) {
      results.set(key(p), result);
      timedWall += wallMs;
      timedScenario += p.scenarioMs;
      runs.push({
        cell: p.cell.id,
        repeat: p.repeat + 1,
        seed: p.seed,
        dir: rel,
        status: 'done',
        exitCode: child.code,
        verdict: result.verdict,
        wallMs,
      });
    } else {
      if (o.signal?.aborted)
        interrupted = String((o.signal.reason as Error | undefined)?.message ?? 'stopped');
      runs.push({
        cell: p.cell.id,
        repeat: p.repeat + 1,
        seed: p.seed,
        dir: rel,
        status: interrupted !== null ? 'not-run' : 'failed',
        exitCode: child.code,
        verdict: null,
        wallMs,
        error: lastLines(child.stderr) || `exit ${child.code ?? child.signal}`,
      });
    }
  }
  progress(planned.length);
  return { runs, results, interrupted };
}

function key(p: Planned): string {
  return `${p.cell.id}/${p.repeat}`;
}

/** The run's result when it finished under the cell's present configuration; else undefined. */
async function finishedResult(p: Planned): Promise<RunResult | undefined> {
  const file = join(p.dir, 'result.json');
  if (!existsSync(file)) return undefined;
  try {
    const cell = JSON.parse(await readFile(join(p.dir, '..', 'cell.json'), 'utf8')) as {
      configHash?: string;
    };
    if (cell.configHash !== p.cell.configHash) return undefined;
    const r = readResultFile(file);
    return r.seed === p.seed && r.verdict !== 'run-failed' ? r : undefined;
  } catch {
    return undefined;
  }
}

/** A cell whose configuration changed since its runs were made starts over. */
async function forgetChangedCells(suite: Suite, out: string): Promise<void> {
  for (const cell of suite.cells) {
    const file = join(out, 'cells', cell.id, 'cell.json');
    if (!existsSync(file)) continue;
    const hash = (JSON.parse(await readFile(file, 'utf8').catch(() => '{}')) as { configHash?: string })
      .configHash;
    if (hash !== cell.configHash) await rm(join(out, 'cells', cell.id), { recursive: true, force: true });
  }
}

interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
}

/**
 * One `pole-bench run`, bounded: past `limitMs`, or once `signal` aborts, it is asked to stop
 * (SIGINT: it tears down as on Ctrl-C) and killed if it has not exited STOP_GRACE_MS later.
 */
function runChild(
  cli: string,
  args: readonly string[],
  limitMs: number,
  signal?: AbortSignal,
): Promise<ChildExit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d: string) => {
      stderr = (stderr + d).slice(-20_000);
    });
    let killer: NodeJS.Timeout | undefined;
    const stop = (): void => {
      if (killer !== undefined) return;
      child.kill('SIGINT');
      killer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    };
    const limit = setTimeout(() => {
      stderr += `\nthe run took longer than ${Math.round(limitMs / 1000)} s: stopped by the suite`;
      stop();
    }, limitMs);
    if (signal?.aborted) stop();
    signal?.addEventListener('abort', stop, { once: true });
    child.on('error', (err) => {
      clearTimeout(limit);
      clearTimeout(killer);
      reject(err);
    });
    child.on('exit', (code, sig) => {
      clearTimeout(limit);
      clearTimeout(killer);
      signal?.removeEventListener('abort', stop);
      resolve({ code, signal: sig, stderr });
    });
  });
}

function lastLines(text: string, n = 5): string {
  return text.trim().split('\n').slice(-n).join('\n');
}
