// src/runtime/swarm/local/: a real Docker Swarm on this one machine, to try and test the swarm runtime: one
// Docker-in-Docker host per emulated data center, joined into a swarm (`swarm up`, `swarm down`).
//
// `swarm up` converges: a whole swarm of the asked shape is kept (its images refreshed), a broken
// or leftover one is removed and made again, one of another shape is refused (exit 2) unless
// --replace. What it makes carries the swarm's labels and is removed again when it fails or is
// interrupted; it leaves, when done, the hosts, their network and the state file (swarm-state.ts)
// that says how to reach the manager. `swarm down` removes all of that, and is a no-op when
// nothing is there.
import { mkdirSync } from 'node:fs';
import { ensureDindImage } from './dind-image.js';
import { daemonAnswers } from '../../../image/docker-probe.js';
import { ImageBuildError } from '../../../image/image-build.js';
import { packageInfo } from '../../../image/image-name.js';
import { InputError } from '../../../util/input-error.js';
import {
  createSwarmNetwork,
  engineAt,
  findSwarmResources,
  type FoundResources,
  hostAddress,
  killInnerContainers,
  removeHosts,
  removeNetworks,
  removeVolumes,
  startHost,
  waitForEngine,
} from './dind-host.js';
import { loadImages, localImages, type SkippedImage } from './image-load.js';
import { SwarmError, SwarmInterrupted } from './swarm-error.js';
import {
  initSwarm,
  joinSwarm,
  kernelHasIpvs,
  labelNode,
  listSwarmNodes,
  nodeIdOf,
  removeIngress,
  waitNodesReady,
} from './swarm-join.js';
import { DC_LABEL } from './swarm-labels.js';
import { sameShape, type SwarmPlan } from './swarm-plan.js';
import {
  checkStateDir,
  ensureStateDir,
  hostDockerHost,
  hostSocketDir,
  readSwarmState,
  removeStateDir,
  swarmStateDir,
  type SwarmState,
  writeSwarmState,
} from './swarm-state.js';

export interface SwarmTimeouts {
  /** For each host's engine to answer on its socket. */
  readonly engineMs: number;
  /** For every node to be Ready with its label. */
  readonly readyMs: number;
  /** For the images' save and loads together. */
  readonly loadMs: number;
}

export const DEFAULT_TIMEOUTS: SwarmTimeouts = { engineMs: 60_000, readyMs: 60_000, loadMs: 600_000 };

/**
 * How long `docker stop` gives a host's engine to stop its containers before the host is killed.
 * Above dockerd's own 15 s shutdown timeout, so a clean stop is never cut short.
 */
const HOST_STOP_SECONDS = 20;

export interface SwarmUpOptions {
  readonly plan: SwarmPlan;
  /** Whether --nodes, --dcs or --topology asked for a shape (else any whole swarm is fine). */
  readonly shapeGiven: boolean;
  /** Remove a whole swarm of any shape and make the asked one. */
  readonly replace: boolean;
  readonly stateDir?: string;
  readonly timeouts?: SwarmTimeouts;
  readonly progress: (line: string) => void;
  /** Aborted by Ctrl-C: what this call made is removed, then SwarmInterrupted. */
  readonly signal?: AbortSignal;
}

export interface Phase {
  readonly name: string;
  readonly ms: number;
}

export interface SwarmUpResult {
  /** created: there was none; already-up: a whole one of this shape was there; replaced: one was removed first. */
  readonly status: 'created' | 'already-up' | 'replaced';
  readonly replacedBecause?: string;
  /** The manager's engine: `export DOCKER_HOST=<this>`. */
  readonly dockerHost: string;
  readonly stateFile: string;
  readonly state: SwarmState;
  /** Per image, the hosts it was loaded into by this call (empty: all had it already). */
  readonly loaded: readonly { readonly host: string; readonly tags: readonly string[] }[];
  readonly skippedImages: readonly SkippedImage[];
  readonly phases: readonly Phase[];
  readonly totalMs: number;
}

export interface SwarmDownResult {
  readonly removed: {
    readonly hosts: readonly string[];
    readonly networks: readonly string[];
    readonly volumes: readonly string[];
    readonly stateDir: boolean;
  };
  /** True when there was nothing to remove. */
  readonly nothing: boolean;
  readonly stateDir: string;
  readonly ms: number;
}

export async function swarmUp(o: SwarmUpOptions): Promise<SwarmUpResult> {
  const started = performance.now();
  const timeouts = o.timeouts ?? DEFAULT_TIMEOUTS;
  const dir = o.stateDir ?? swarmStateDir();
  checkStateDir(dir, o.plan.hosts.at(-1)!.name);
  useMachineDocker(dir, o.progress);
  await requireDaemon();
  const phases: Phase[] = [];
  const timed = async <T>(name: string, f: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    const v = await f();
    phases.push({ name, ms: performance.now() - t0 });
    return v;
  };

  const existing = await timed('inspect', () => inspectExisting(dir, o.signal));
  let replacedBecause: string | undefined;
  if (existing.kind === 'whole') {
    const fits = !o.shapeGiven || sameShape(o.plan, existing.state.hosts);
    if (!o.replace && fits) {
      o.progress(`a local swarm of ${describe(existing.state.hosts)} is already up`);
      return refresh(existing.state, dir, o, timeouts, phases, started);
    }
    if (!o.replace) {
      throw new SwarmError(
        `a local swarm of ${describe(existing.state.hosts)} is already up, not the ${describe(o.plan.hosts)} ` +
          `asked for: pole-bench swarm down first, or swarm up --replace`,
        2,
      );
    }
    replacedBecause = '--replace';
  } else if (existing.kind === 'broken') {
    replacedBecause = existing.why;
  }
  if (replacedBecause !== undefined) {
    o.progress(`replacing the local swarm (${replacedBecause})`);
    const gone = await timed('remove old', () => teardown(dir));
    o.progress(`  removed ${summary(gone)}`);
  }

  try {
    return await create(dir, o, timeouts, phases, timed, started, replacedBecause);
  } catch (err) {
    // Nothing half made stays: whatever carries the swarm's labels goes, and the state folder.
    o.progress(
      err instanceof SwarmInterrupted
        ? `${err.message}: removing what swarm up made`
        : 'swarm up failed: removing what it made',
    );
    await teardown(dir).catch(() => undefined);
    throw err;
  }
}

async function create(
  dir: string,
  o: SwarmUpOptions,
  timeouts: SwarmTimeouts,
  phases: Phase[],
  timed: <T>(name: string, f: () => Promise<T>) => Promise<T>,
  started: number,
  replacedBecause: string | undefined,
): Promise<SwarmUpResult> {
  const { plan, signal, progress } = o;
  const hostImage = await timed('host image', async () => {
    try {
      return await ensureDindImage(progress, signal);
    } catch (err) {
      if (signal?.aborted) throw new SwarmInterrupted(signal.reason);
      if (err instanceof ImageBuildError) throw new SwarmError(err.message, err.exitCode, err.tail);
      throw err;
    }
  });
  const version = packageInfo().version;
  const images = await localImages(plan.images, version);
  for (const s of images.skipped) progress(`not loading ${s.tag}: ${s.reason}`);

  ensureStateDir(dir);
  if (signal?.aborted) throw new SwarmInterrupted(signal.reason);
  const network = await timed('network and hosts', async () => {
    // Not cancelled by the signal: a `docker run` cut short may still make its container on the
    // daemon after the clean-up looked; each takes about a second, and the signal is looked at
    // right after. Every start is waited for (allSettled) before a failure is thrown, for the same
    // reason.
    const net = await createSwarmNetwork();
    const gid = process.getgid?.() ?? 0;
    const starts = await Promise.allSettled(
      plan.hosts.map((h) => {
        mkdirSync(hostSocketDir(dir, h.name), { recursive: true, mode: 0o700 });
        return startHost(h, {
          image: hostImage.tag,
          network: net.name,
          socketDir: hostSocketDir(dir, h.name),
          gid,
        });
      }),
    );
    const failed = starts.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    return net;
  });
  if (signal?.aborted) throw new SwarmInterrupted(signal.reason);
  progress(`started ${plan.hosts.length} hosts on network ${network.name} (${network.subnet})`);

  const hosts = await timed('engines', () =>
    Promise.all(
      plan.hosts.map(async (h) => {
        const dockerHost = hostDockerHost(dir, h.name);
        const address = await hostAddress(h.name, network.name, signal);
        const engineVersion = await waitForEngine(h.name, dockerHost, timeouts.engineMs, signal);
        return { ...h, dockerHost, address, engineVersion };
      }),
    ),
  );
  progress(`engines answer (Docker ${hosts[0]!.engineVersion} in each host)`);

  const swarm = await timed('swarm', async () => {
    const manager = hosts[0]!;
    const managerEngine = engineAt(manager.dockerHost);
    const token = await initSwarm(managerEngine, manager.address, signal);
    const ingress = kernelHasIpvs();
    if (!ingress) {
      await removeIngress(managerEngine, signal);
      progress(
        "no IPVS in this kernel: removed the swarm's ingress network (no routing mesh, no virtual IPs; " +
          'publish ports in host mode, use endpoint mode dnsrr)',
      );
    }
    await Promise.all(
      hosts
        .slice(1)
        .map((h) =>
          joinSwarm(
            engineAt(h.dockerHost),
            { name: h.name, address: h.address, managerAddress: manager.address, token },
            signal,
          ),
        ),
    );
    const ids = await Promise.all(
      hosts.map(async (h) => ({ ...h, nodeId: await nodeIdOf(engineAt(h.dockerHost), h.name, signal) })),
    );
    for (const h of ids) await labelNode(managerEngine, h.nodeId, { [DC_LABEL]: h.dc }, signal);
    await waitNodesReady(managerEngine, new Map(ids.map((h) => [h.nodeId, h.dc])), timeouts.readyMs, signal);
    return { hosts: ids, ingress };
  });
  const withIds = swarm.hosts;
  progress(`swarm: ${describe(withIds)}, all Ready and labelled ${DC_LABEL}`);

  const load = await timed('images', () =>
    loadImages(images.present, hosts, {
      timeoutMs: timeouts.loadMs,
      progress,
      ...(signal ? { signal } : {}),
    }),
  );

  const containerIds = await findSwarmResources(signal);
  const state: SwarmState = {
    version: 1,
    createdAt: new Date().toISOString(),
    dockerHost: withIds[0]!.dockerHost,
    network: { name: network.name, id: network.id, subnet: network.subnet },
    ingress: swarm.ingress,
    hostImage: hostImage.tag,
    hosts: withIds.map((h) => ({
      name: h.name,
      dc: h.dc,
      role: h.role,
      ...(h.monoShiftS !== undefined ? { monoShiftS: h.monoShiftS } : {}),
      containerId: containerIds.hosts.find((c) => c.name === h.name)?.id ?? '',
      address: h.address,
      nodeId: h.nodeId,
      dockerHost: h.dockerHost,
    })),
    images: images.present.map((i) => ({ tag: i.tag, id: i.id })),
    skippedImages: images.skipped.map((s) => ({ tag: s.tag, reason: s.reason })),
  };
  const stateFile = writeSwarmState(dir, state);
  return {
    status: replacedBecause === undefined ? 'created' : 'replaced',
    ...(replacedBecause !== undefined ? { replacedBecause } : {}),
    dockerHost: state.dockerHost,
    stateFile,
    state,
    loaded: load.loaded,
    skippedImages: images.skipped,
    phases,
    totalMs: performance.now() - started,
  };
}

/** A whole swarm that is kept: only its images are brought up to date with the machine's. */
async function refresh(
  state: SwarmState,
  dir: string,
  o: SwarmUpOptions,
  timeouts: SwarmTimeouts,
  phases: Phase[],
  started: number,
): Promise<SwarmUpResult> {
  const t0 = performance.now();
  const images = await localImages(o.plan.images, packageInfo().version);
  for (const s of images.skipped) o.progress(`not loading ${s.tag}: ${s.reason}`);
  const load = await loadImages(images.present, state.hosts, {
    timeoutMs: timeouts.loadMs,
    progress: o.progress,
    ...(o.signal ? { signal: o.signal } : {}),
  });
  phases.push({ name: 'images', ms: performance.now() - t0 });
  const kept = new Map(state.images.map((i) => [i.tag, i]));
  for (const i of images.present) kept.set(i.tag, { tag: i.tag, id: i.id });
  const next: SwarmState = {
    ...state,
    images: [...kept.values()],
    skippedImages: images.skipped.map((s) => ({ tag: s.tag, reason: s.reason })),
  };
  const stateFile = writeSwarmState(dir, next);
  return {
    status: 'already-up',
    dockerHost: next.dockerHost,
    stateFile,
    state: next,
    loaded: load.loaded,
    skippedImages: images.skipped,
    phases,
    totalMs: performance.now() - started,
  };
}

type Existing =
  | { readonly kind: 'none' }
  | { readonly kind: 'whole'; readonly state: SwarmState }
  | { readonly kind: 'broken'; readonly why: string };

/** What is there now: nothing, a whole swarm its state file describes, or something else (leftovers). */
async function inspectExisting(dir: string, signal?: AbortSignal): Promise<Existing> {
  let state: SwarmState | undefined;
  let unreadable: string | undefined;
  try {
    state = readSwarmState(dir);
  } catch (err) {
    if (!(err instanceof InputError)) throw err;
    unreadable = err.message;
  }
  const found = await findSwarmResources(signal);
  const anything = found.hosts.length + found.networks.length + found.volumes.length > 0;
  if (!state) {
    if (unreadable) return { kind: 'broken', why: `the state file is not one: ${unreadable}` };
    return anything
      ? { kind: 'broken', why: `leftovers with no state file: ${resourceList(found)}` }
      : { kind: 'none' };
  }
  const why = await brokenBecause(state, found);
  return why === undefined ? { kind: 'whole', state } : { kind: 'broken', why };
}

/** Why the swarm STATE describes is not whole any more, or undefined when it is. */
async function brokenBecause(state: SwarmState, found: FoundResources): Promise<string | undefined> {
  const want = state.hosts.map((h) => h.name).join(',');
  const have = found.hosts.map((h) => h.name).join(',');
  if (want !== have) return `the state file lists hosts ${want || 'none'}, the machine has ${have || 'none'}`;
  const stopped = found.hosts.filter((h) => !h.running);
  if (stopped.length > 0) return `host ${stopped.map((h) => h.name).join(', ')} is not running`;
  if (!found.networks.some((n) => n.id === state.network.id)) return `network ${state.network.name} is gone`;
  let nodes;
  try {
    nodes = await listSwarmNodes(engineAt(state.dockerHost, 5_000));
  } catch (err) {
    return `the manager does not answer (${(err as Error).message})`;
  }
  for (const h of state.hosts) {
    const n = nodes.find((x) => x.id === h.nodeId);
    if (!n) return `${h.name} is not in the swarm`;
    if (n.state !== 'ready') return `${h.name} is ${n.state}`;
    if (n.labels[DC_LABEL] !== h.dc) return `${h.name} lost its ${DC_LABEL} label`;
  }
  return undefined;
}

interface Removed {
  readonly hosts: string[];
  readonly networks: string[];
  readonly volumes: string[];
  readonly stateDir: boolean;
}

/** Removes everything labelled as the local swarm's, and the state folder. */
async function teardown(dir: string): Promise<Removed> {
  const removed = { hosts: new Set<string>(), networks: new Set<string>(), volumes: new Set<string>() };
  // Looked for again after each removal: a container whose creation was under way when the
  // first look was taken shows up in the second.
  for (let round = 0; round < TEARDOWN_ROUNDS; round++) {
    const found = await findSwarmResources();
    if (found.hosts.length + found.networks.length + found.volumes.length === 0) {
      return {
        hosts: [...removed.hosts],
        networks: [...removed.networks],
        volumes: [...removed.volumes],
        stateDir: removeStateDir(dir),
      };
    }
    await Promise.all(
      found.hosts.filter((h) => h.running).map((h) => killInnerContainers(hostDockerHost(dir, h.name))),
    );
    await removeHosts(
      found.hosts.map((h) => h.name),
      HOST_STOP_SECONDS,
    );
    await removeNetworks(found.networks.map((n) => n.id));
    await removeVolumes(found.volumes);
    found.hosts.forEach((h) => removed.hosts.add(h.name));
    found.networks.forEach((n) => removed.networks.add(n.name));
    found.volumes.forEach((v) => removed.volumes.add(v));
  }
  throw new SwarmError(`could not remove ${resourceList(await findSwarmResources())}`, 3);
}

const TEARDOWN_ROUNDS = 3;

export async function swarmDown(o: {
  readonly stateDir?: string;
  readonly progress: (line: string) => void;
}): Promise<SwarmDownResult> {
  const started = performance.now();
  const dir = o.stateDir ?? swarmStateDir();
  useMachineDocker(dir, o.progress);
  await requireDaemon();
  const removed = await teardown(dir);
  return {
    removed,
    nothing:
      removed.hosts.length + removed.networks.length + removed.volumes.length === 0 && !removed.stateDir,
    stateDir: dir,
    ms: performance.now() - started,
  };
}

/**
 * After `export DOCKER_HOST=<the manager>`, this process's docker calls would go to the swarm's
 * manager: the hosts live on the machine's own Docker, so that DOCKER_HOST is dropped here.
 */
function useMachineDocker(dir: string, progress: (line: string) => void): void {
  const host = process.env.DOCKER_HOST;
  if (host?.startsWith(`unix://${dir}/`)) {
    delete process.env.DOCKER_HOST;
    progress(`DOCKER_HOST names a host of the local swarm: using the machine's own Docker instead`);
  }
}

async function requireDaemon(): Promise<void> {
  const d = await daemonAnswers();
  if (!d.ok) {
    throw new SwarmError(
      `no Docker daemon answers (${d.detail}): start one (scripts/ci-docker.sh start does)`,
      3,
    );
  }
}

function describe(
  hosts: readonly { readonly name: string; readonly dc: string; readonly role: string }[],
): string {
  return `${hosts.length} host${hosts.length === 1 ? '' : 's'} (${hosts.map((h) => `${h.name} ${h.role} in ${h.dc}`).join(', ')})`;
}

function resourceList(f: FoundResources): string {
  return [
    ...f.hosts.map((h) => `container ${h.name}`),
    ...f.networks.map((n) => `network ${n.name}`),
    ...f.volumes.map((v) => `volume ${v}`),
  ].join(', ');
}

function summary(r: Removed): string {
  const parts = [
    r.hosts.length > 0 ? `hosts ${r.hosts.join(', ')}` : '',
    r.networks.length > 0 ? `network ${r.networks.join(', ')}` : '',
    r.volumes.length > 0 ? `volumes ${r.volumes.join(', ')}` : '',
    r.stateDir ? 'the state folder' : '',
  ].filter((p) => p.length > 0);
  return parts.length > 0 ? parts.join(', ') : 'nothing';
}
