// Docker tests run where a daemon answers and the node image exists (`.ci/run` makes sure of both);
// elsewhere they skip and say why.
import assert from 'node:assert/strict';
import Docker from 'dockerode';
import type { RunResult } from '../../src/report/result.js';
import { dockerStatus } from '../../src/image/docker-probe.js';
import { ownImageOf, targetNamed } from '../../src/targets/registry.js';
import { DOCKER_LABELS } from '../../src/runtime/docker/docker-labels.js';
import type { TargetName } from '../../src/vocabulary/names.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertRunExit, runCli } from '../support/run-cli.js';
import { checkNodeTunables } from '../support/node-tunables-check.js';
import { assertSelfCheckClean } from '../support/self-check-clean.js';

/** undefined when Docker tests of `target` can run (its images exist), else the reason they skip. */
export async function dockerSkipReason(target: TargetName = 'pole'): Promise<string | undefined> {
  const s = await dockerStatus(undefined, ownImageOf(targetNamed(target))?.target);
  return s.image ? undefined : `Docker tests skipped: ${s.reason}`;
}

export async function nodeImage(): Promise<string> {
  const s = await dockerStatus();
  if (!s.image) throw new Error(s.reason);
  return s.image;
}

/** Every container and network labelled pole-bench that is still there. */
export async function dockerLeftovers(): Promise<string[]> {
  const docker = new Docker();
  const filters = JSON.stringify({ label: [`${DOCKER_LABELS.managed}=true`] });
  const cs = await docker.listContainers({ all: true, filters });
  const ns = await docker.listNetworks({ filters });
  return [...cs.map((c) => `container ${c.Names[0]}`), ...ns.map((n) => `network ${n.Name}`)];
}

/**
 * What the swarm runtime made and left: its objects are all named pb-<run>-… and labelled
 * pole-bench. (Only those: the engine may be shared with other pole-bench work, whose labelled
 * containers are not this test's to judge or remove.) A worker's engine has no services or configs
 * to list (`manager` false): only its containers, volumes and networks.
 */
export async function swarmLeftovers(d: Docker, manager = true): Promise<string[]> {
  const filters = JSON.stringify({ label: [`${DOCKER_LABELS.managed}=true`] });
  type Named = Array<{ Spec: { Name: string } }>;
  const services = manager ? ((await d.listServices({ filters })) as unknown as Named) : [];
  const configs = manager ? ((await d.listConfigs({ filters })) as unknown as Named) : [];
  const volumes = (await d.listVolumes({ filters })).Volumes ?? [];
  const containers = await d.listContainers({ all: true, filters });
  const networks = await d.listNetworks({ filters });
  return [
    ...services.map((s) => `service ${s.Spec.Name}`),
    ...configs.map((c) => `config ${c.Spec.Name}`),
    ...volumes.map((v) => `volume ${v.Name}`),
    ...containers.map((c) => `container ${c.Names[0]?.replace(/^\//, '')}`),
    ...networks.map((n) => `network ${n.Name}`),
  ].filter((name) => / pb-/.test(name));
}

/** A swarm run's output that must have passed with p5 initial leader and killed: its result. */
export function passedSwarmRun(r: { code: number; stdout: string; stderr: string }): RunResult {
  assertRunExit(r, 0);
  const result = JSON.parse(r.stdout) as RunResult;
  assert.equal(result.runtime, 'swarm');
  assert.equal(result.verdict, 'passed', result.errors.join('; '));
  assert.equal(result.leaders.initial, 'p5');
  assert.equal(result.leaders.killed, 'p5');
  // A swarm task's tunables go by its start script.
  if (result.target === 'pole') checkNodeTunables(result);
  assertSelfCheckClean(result);
  return result;
}

/** The labels of a run's self-check processes in one group (nodes, agents), in the order read. */
export function cpuLabels(result: RunResult, group: string): string[] {
  return [...new Set(result.cpu.processes.filter((p) => p.group === group).map((p) => p.label))];
}

/**
 * `run FILE --target TARGET --runtime docker` with `env` set to keep a member from starting: its exit
 * code, stdout and stderr together, and how long it took. Its report folder is removed.
 */
export async function dockerRunThatCannotStart(
  file: string,
  target: TargetName,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; output: string; stderr: string; ms: number }> {
  const out = await mkdtemp(join(tmpdir(), `pole-bench-${target}-docker-bad-`));
  try {
    const started = Date.now();
    const r = await runCli(['run', file, '--target', target, '--runtime', 'docker', '--out', out], {
      ...process.env,
      ...env,
    });
    return { code: r.code, output: r.stdout + r.stderr, stderr: r.stderr, ms: Date.now() - started };
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}
