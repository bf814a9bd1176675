// Where the local swarm's state lives and what its state file says: the manager's Docker API
// (what DOCKER_HOST should be), every host's container, address, data center, swarm node id and
// API socket, and the images loaded into them. `swarm up` writes it once the swarm is whole;
// `swarm down` and the swarm runtime read it.
//
// The state directory (mode 0700) also holds one folder per host, mounted into the host at
// /run/pole-bench-dind, where the host's dockerd makes its API socket: so the engines are reached
// as unix://<dir>/hosts/<host>/docker.sock, by this user (and root) only.
import { chmodSync, mkdirSync, renameSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { InputError } from '../../../util/input-error.js';
import { loadValidatedFile } from '../../../util/load-validated.js';
import { SwarmInputError } from './swarm-plan.js';

/** The environment variable that moves the state directory (tests, several users on one machine). */
export const STATE_DIR_ENV = 'POLE_SWARM_STATE';

const STATE_FILE = 'swarm.json';
const SOCKET = 'docker.sock';
/** A unix socket's path must fit sun_path: 108 bytes with its terminating NUL. */
const MAX_SOCKET_PATH = 107;

/**
 * $POLE_SWARM_STATE, else $XDG_STATE_HOME/pole-bench/swarm, else ~/.local/state/pole-bench/swarm.
 * In the user's home rather than /tmp: the folder holds root-equivalent API sockets, and a folder
 * of that name in /tmp could have been made beforehand by another user.
 */
export function swarmStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const set = env[STATE_DIR_ENV];
  if (set !== undefined && set.length > 0) return set;
  const xdg = env.XDG_STATE_HOME;
  const base = xdg !== undefined && xdg.length > 0 ? xdg : join(homedir(), '.local', 'state');
  return join(base, 'pole-bench', 'swarm');
}

export function stateFilePath(dir: string): string {
  return join(dir, STATE_FILE);
}

/** The folder mounted into HOST at /run/pole-bench-dind. */
export function hostSocketDir(dir: string, host: string): string {
  return join(dir, 'hosts', host);
}

/** HOST's engine, as DOCKER_HOST would name it. */
export function hostDockerHost(dir: string, host: string): string {
  return `unix://${join(hostSocketDir(dir, host), SOCKET)}`;
}

/** The socket's file path in a unix:// DOCKER_HOST. */
export function socketPath(dockerHost: string): string {
  return dockerHost.replace(/^unix:\/\//, '');
}

/** Refuses a state directory whose sockets could not be made (too long a path for a unix socket). */
export function checkStateDir(dir: string, longestHost: string): void {
  const longest = socketPath(hostDockerHost(dir, longestHost));
  if (Buffer.byteLength(longest) > MAX_SOCKET_PATH) {
    throw new SwarmInputError(
      STATE_DIR_ENV,
      `the state directory ${dir} is too deep for a unix socket (${longest} is ` +
        `${Buffer.byteLength(longest)} bytes, at most ${MAX_SOCKET_PATH}): set ${STATE_DIR_ENV} to a shorter path`,
    );
  }
}

const HostState = z.object({
  name: z.string().min(1),
  dc: z.string().min(1),
  role: z.enum(['manager', 'worker']),
  /** Its containers' monotonic clocks ahead of the machine's by this many seconds (--mono-shift). */
  monoShiftS: z.number().int().positive().optional(),
  containerId: z.string().min(1),
  /** The host's address on the swarm's bridge network (swarm traffic, published ports). */
  address: z.string().min(1),
  nodeId: z.string().min(1),
  dockerHost: z.string().startsWith('unix://'),
});

const LoadedImage = z.object({ tag: z.string().min(1), id: z.string().min(1) });
const SkippedImage = z.object({ tag: z.string().min(1), reason: z.string() });

const SwarmStateSchema = z
  .object({
    version: z.literal(1),
    createdAt: z.string(),
    /** The manager's engine: `export DOCKER_HOST=<this>` reaches the swarm. */
    dockerHost: z.string().startsWith('unix://'),
    network: z.object({ name: z.string().min(1), id: z.string().min(1), subnet: z.string() }),
    /**
     * Whether the swarm has its ingress network (routing mesh, virtual IPs): removed when the
     * kernel has no IPVS, so services must publish in host mode with endpoint mode dnsrr.
     */
    ingress: z.boolean(),
    hostImage: z.string().min(1),
    hosts: z.array(HostState).min(1),
    images: z.array(LoadedImage),
    skippedImages: z.array(SkippedImage),
  })
  .superRefine((s, ctx) => {
    const managers = s.hosts.filter((h) => h.role === 'manager');
    if (managers.length !== 1) {
      ctx.addIssue({
        code: 'custom',
        path: ['hosts'],
        message: `expected exactly one manager, found ${managers.length}`,
      });
    } else if (managers[0]!.dockerHost !== s.dockerHost) {
      ctx.addIssue({
        code: 'custom',
        path: ['dockerHost'],
        message: `is not the manager's (${managers[0]!.dockerHost})`,
      });
    }
  });

export type SwarmState = z.infer<typeof SwarmStateSchema>;
export type SwarmHostState = z.infer<typeof HostState>;

/**
 * The state file of DIR, or undefined when there is none. A file that is there but not a state
 * file throws an InputError naming it and the field (exit 2).
 */
export function readSwarmState(dir: string): SwarmState | undefined {
  const file = stateFilePath(dir);
  if (!exists(file)) return undefined;
  return loadValidatedFile(file, SwarmStateSchema);
}

/** Written whole or not at all (a temporary file renamed over it), readable by this user only. */
export function writeSwarmState(dir: string, state: SwarmState): string {
  const checked = SwarmStateSchema.safeParse(state);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    throw new InputError({
      file: stateFilePath(dir),
      field: issue?.path.join('.') ?? '',
      problem: `refusing to write an invalid state: ${issue?.message ?? 'invalid'}`,
    });
  }
  ensureStateDir(dir);
  const file = stateFilePath(dir);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, file);
  return file;
}

/** The state directory and its hosts/ folder, made this user's alone (0700). */
export function ensureStateDir(dir: string): void {
  mkdirSync(join(dir, 'hosts'), { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
}

/**
 * Removes the state file and the hosts/ folder of socket folders, then the directory if that left
 * it empty: only what `swarm up` made, since $POLE_SWARM_STATE may name a folder that holds more.
 * True when there was anything to remove.
 */
export function removeStateDir(dir: string): boolean {
  const mine = [stateFilePath(dir), join(dir, 'hosts')];
  const existed = mine.filter((p) => exists(p)).length > 0;
  for (const p of mine) rmSync(p, { recursive: true, force: true });
  try {
    rmdirSync(dir);
  } catch {
    // not empty (someone else's files) or already gone: left as it is
  }
  return existed;
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}
