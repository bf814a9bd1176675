// The local swarm's hosts on the machine's Docker: the bridge network made for them, one DinD host
// container per host (the options Docker-in-Docker needs here, the tmpfs its engine keeps images
// in, the folder its API socket comes out through), the wait for each inner engine, and their
// removal. Everything made here carries the swarm's labels (swarm-labels.ts).
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import Docker from 'dockerode';
import { CommandError, docker, dockerMaybe } from '../../../image/docker-cli.js';
import { SwarmError, SwarmInterrupted } from './swarm-error.js';
import {
  DC_LABEL,
  hostLabels,
  labelArgs,
  networkLabels,
  SWARM_ROLE_LABEL,
  SWARM_ROLES,
  swarmFilters,
} from './swarm-labels.js';
import type { SwarmHostPlan, SwarmRole } from './swarm-plan.js';
import { socketPath } from './swarm-state.js';

/** The user-defined bridge the hosts talk over (swarm control 2377, gossip 7946, VXLAN 4789). */
export const SWARM_NETWORK = 'pole-bench-swarm';
/** Where the host's dockerd makes the API socket the machine sees (dind-image/dind-entrypoint.sh). */
const SOCKET_MOUNT = '/run/pole-bench-dind';

/** A docker CLI call that ends when SIGNAL aborts, and says so rather than as a failed command. */
export async function dockerCall(args: readonly string[], signal?: AbortSignal): Promise<string> {
  try {
    return await docker(args, signal ? { cancelSignal: signal } : {});
  } catch (err) {
    if (signal?.aborted) throw new SwarmInterrupted(signal.reason);
    if (err instanceof CommandError) throw new SwarmError(err.message, 3, err.tail);
    throw err;
  }
}

export interface FoundHost {
  readonly id: string;
  readonly name: string;
  readonly running: boolean;
  readonly dc: string;
  readonly role: SwarmRole | '';
}

export interface FoundResources {
  readonly hosts: readonly FoundHost[];
  readonly networks: readonly { readonly id: string; readonly name: string }[];
  readonly volumes: readonly string[];
}

const filterArgs = (role?: string): string[] => swarmFilters(role).flatMap((f) => ['--filter', f]);

/** Everything on the machine's Docker labelled as the local swarm's, whatever the state file says. */
export async function findSwarmResources(signal?: AbortSignal): Promise<FoundResources> {
  const rows = (text: string): string[][] =>
    text
      .split('\n')
      .filter((l) => l.length > 0)
      .map((l) => l.split('\t'));
  const ps = await dockerCall(
    [
      'ps',
      '--all',
      '--no-trunc',
      ...filterArgs(SWARM_ROLES.host),
      '--format',
      `{{.ID}}\t{{.Names}}\t{{.State}}\t{{.Label "${DC_LABEL}"}}\t{{.Label "${SWARM_ROLE_LABEL}"}}`,
    ],
    signal,
  );
  const hosts = rows(ps)
    .map(([id = '', name = '', state = '', dc = '', role = '']): FoundHost => ({
      id,
      name,
      running: state === 'running',
      dc,
      role: role === 'manager' || role === 'worker' ? role : '',
    }))
    .sort((a, b) => a.name.localeCompare(b.name, 'en', { numeric: true }));
  const nets = await dockerCall(
    ['network', 'ls', '--no-trunc', ...filterArgs(SWARM_ROLES.network), '--format', '{{.ID}}\t{{.Name}}'],
    signal,
  );
  const networks = rows(nets).map(([id = '', name = '']) => ({ id, name }));
  const vols = await dockerCall(['volume', 'ls', ...filterArgs(), '--format', '{{.Name}}'], signal);
  return { hosts, networks, volumes: rows(vols).map(([name = '']) => name) };
}

export interface SwarmNetwork {
  readonly id: string;
  readonly name: string;
  readonly subnet: string;
}

export async function createSwarmNetwork(signal?: AbortSignal): Promise<SwarmNetwork> {
  const id = await dockerCall(
    ['network', 'create', '--driver', 'bridge', ...labelArgs(networkLabels()), SWARM_NETWORK],
    signal,
  );
  const subnet = await dockerCall(
    ['network', 'inspect', '--format', '{{range .IPAM.Config}}{{.Subnet}} {{end}}', id],
    signal,
  );
  return { id, name: SWARM_NETWORK, subnet: subnet.split(' ')[0] ?? '' };
}

export interface HostStart {
  readonly image: string;
  readonly network: string;
  /** The machine's folder mounted at /run/pole-bench-dind (the host's API socket comes out there). */
  readonly socketDir: string;
  /** The group that may use that socket: the caller's. */
  readonly gid: number;
  readonly signal?: AbortSignal;
}

/** The `docker run` arguments of one host (pure; exported for the unit test of the options). */
export function hostRunArgs(h: SwarmHostPlan, o: Omit<HostStart, 'signal'>): string[] {
  return [
    'run',
    '--detach',
    '--name',
    h.name,
    '--hostname',
    h.name,
    '--network',
    o.network,
    ...labelArgs(hostLabels(h.dc, h.role)),
    // Docker-in-Docker without --privileged (which this machine refuses): every capability but
    // SYS_RESOURCE, no seccomp/apparmor profile, writable /proc/sys and /sys (systempaths), and
    // the cgroup tree for the inner containers' cgroups.
    '--cap-add',
    'ALL',
    '--cap-drop',
    'SYS_RESOURCE',
    '--security-opt',
    'seccomp=unconfined',
    '--security-opt',
    'apparmor=unconfined',
    '--security-opt',
    'systempaths=unconfined',
    '--volume',
    '/sys/fs/cgroup:/sys/fs/cgroup:rw',
    // The inner engine's images and containers: overlay2 cannot stack on the container's own
    // overlay root, it can on a tmpfs; and a tmpfs goes with the container (no volume to leak).
    '--tmpfs',
    '/var/lib/docker:exec',
    '--volume',
    `${o.socketDir}:${SOCKET_MOUNT}`,
    // The entrypoint runs the engine in a time namespace of its own, its clocks this much ahead.
    ...(h.monoShiftS !== undefined ? ['--env', `POLE_BENCH_MONO_SHIFT_S=${h.monoShiftS}`] : []),
    o.image,
    String(o.gid),
  ];
}

export async function startHost(h: SwarmHostPlan, o: HostStart): Promise<string> {
  return dockerCall(hostRunArgs(h, o), o.signal);
}

/** The host's address on the swarm network. */
export async function hostAddress(name: string, network: string, signal?: AbortSignal): Promise<string> {
  const ip = await dockerCall(
    [
      'container',
      'inspect',
      '--format',
      `{{(index .NetworkSettings.Networks "${network}").IPAddress}}`,
      name,
    ],
    signal,
  );
  if (!/^\d+\.\d+\.\d+\.\d+$/.test(ip)) {
    throw new SwarmError(`${name} has no IPv4 address on ${network} (got "${ip}")`, 3);
  }
  return ip;
}

/** The engine of a host, through its socket (calls fail after timeoutMs without an answer). */
export function engineAt(dockerHost: string, timeoutMs = 30_000): Docker {
  return new Docker({ socketPath: socketPath(dockerHost), timeout: timeoutMs });
}

const POLL_MS = 250;
const CONTAINER_CHECK_MS = 2_000;

/**
 * Waits until the host's engine answers on its socket; fails when the host container stopped
 * (with the end of its log) or after timeoutMs. Resolves to the engine's version.
 */
export async function waitForEngine(
  name: string,
  dockerHost: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<string> {
  const sock = socketPath(dockerHost);
  const engine = engineAt(dockerHost, 5_000);
  const started = Date.now();
  let lastCheck = started;
  let last = `no socket at ${sock} yet`;
  for (;;) {
    if (signal?.aborted) throw new SwarmInterrupted(signal.reason);
    // The socket appears once dockerd listens: until then there is nothing to ask.
    if (existsSync(sock)) {
      try {
        const v = (await engine.version()) as { Version?: string };
        return v.Version ?? 'unknown';
      } catch (err) {
        last = (err as Error).message;
      }
    }
    const now = Date.now();
    if (now - lastCheck >= CONTAINER_CHECK_MS) {
      lastCheck = now;
      const state = await dockerMaybe(['container', 'inspect', '--format', '{{.State.Status}}', name]);
      if (state !== 'running') {
        throw new SwarmError(
          `host ${name} ${state ? `is ${state}` : 'is gone'} before its Docker engine answered`,
          3,
          await hostLogTail(name),
        );
      }
    }
    if (now - started >= timeoutMs) {
      throw new SwarmError(
        `the Docker engine in ${name} did not answer within ${timeoutMs / 1000} s (${last}); ` +
          `is the machine's Docker this machine's own (the socket folder is mounted from here)?`,
        3,
        await hostLogTail(name),
      );
    }
    await sleep(POLL_MS, undefined, signal ? { signal } : {}).catch(() => undefined);
  }
}

/** The last lines a host's engine logged (for an error's diagnosis). */
export async function hostLogTail(name: string, lines = 30): Promise<string[]> {
  const out = await dockerMaybe(['logs', '--tail', String(lines), name]);
  return (out ?? '').split('\n').filter((l) => l.trim().length > 0);
}

/**
 * Kills (SIGKILL) every container a host's engine runs, so that its engine then stops at once:
 * a container whose main process ignores SIGTERM (a shell as PID 1 does) would otherwise hold
 * the engine's shutdown for its full stop timeout. The engine still removes each container's
 * cgroup as it dies. A host whose socket is not there, or that does not answer, is skipped
 * (stopping it then takes longer, nothing else).
 */
export async function killInnerContainers(dockerHost: string): Promise<number> {
  if (!existsSync(socketPath(dockerHost))) return 0;
  const engine = engineAt(dockerHost, 5_000);
  try {
    const running = await engine.listContainers();
    await Promise.all(
      running.map((c) =>
        engine
          .getContainer(c.Id)
          .kill()
          .catch(() => undefined),
      ),
    );
    return running.length;
  } catch {
    return 0;
  }
}

/**
 * Stops the hosts, giving each engine stopSeconds to stop its own containers (so their cgroups
 * go too: a killed engine leaves its containers' cgroups behind in the machine's tree), then
 * removes them. Hosts that are already gone are fine.
 */
export async function removeHosts(names: readonly string[], stopSeconds: number): Promise<void> {
  if (names.length === 0) return;
  // One `docker stop` for all: the CLI stops them in parallel.
  await dockerMaybe(['stop', '--time', String(stopSeconds), ...names]);
  const r = await dockerMaybe(['rm', '--force', '--volumes', ...names]);
  if (r === undefined) {
    // Some were gone already (the CLI fails the whole call then): the rest one by one.
    for (const n of names) await dockerMaybe(['rm', '--force', '--volumes', n]);
  }
}

export async function removeNetworks(ids: readonly string[]): Promise<void> {
  for (const id of ids) await dockerMaybe(['network', 'rm', id]);
}

export async function removeVolumes(names: readonly string[]): Promise<void> {
  for (const n of names) await dockerMaybe(['volume', 'rm', '--force', n]);
}
