// The processes of a container, for the self-check on the docker runtime: every process a
// container runs is in its cgroup, and the host's /proc sees them all (one kernel). From the
// container's init pid (`docker inspect` State.Pid) to the cgroup's process list, v1 or v2.
//
// A cgroup's path in /proc/<pid>/cgroup is not a file path: it is relative to the hierarchy's root
// as this process's cgroup namespace sees it, and the hierarchy is mounted wherever the system
// mounted it, possibly only a subtree of it. On a host the two agree (/sys/fs/cgroup/<controller>
// shows the root); inside a container they do not: without a cgroup namespace (cgroup v1) the path
// is "/docker/<id>" while /sys/fs/cgroup/cpuacct shows just that subtree; with one (v2) the path is
// "/" and the container's cgroup is /sys/fs/cgroup itself. So the path is resolved through this
// process's mount table (/proc/self/mountinfo: each cgroup mount's root and mount point).
import { existsSync, readFileSync } from 'node:fs';

const CGROUP_ROOT = '/sys/fs/cgroup';

/** A cgroup file system mounted here: which hierarchy, which subtree of it, and where. */
export interface CgroupMount {
  /** 2: the unified hierarchy (cgroup2); 1: a v1 hierarchy, whose controllers are in `options`. */
  readonly version: 1 | 2;
  /** The super block's options, e.g. ["rw", "cpu", "cpuacct"]: a v1 mount's controllers are among them. */
  readonly options: readonly string[];
  /** The cgroup path the mount point shows (mountinfo's 4th field), e.g. "/" or "/docker/<id>". */
  readonly root: string;
  readonly mountPoint: string;
}

/** mountinfo escapes space, tab, newline and backslash as \ooo. */
const unescape = (s: string): string =>
  s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));

/** The cgroup mounts listed in a mountinfo text (proc(5)), in order. */
export function parseCgroupMounts(mountinfo: string): CgroupMount[] {
  const mounts: CgroupMount[] = [];
  for (const line of mountinfo.split('\n')) {
    const sep = line.indexOf(' - ');
    if (sep < 0) continue;
    const [, , , root, mountPoint] = line.slice(0, sep).split(' ');
    const [fstype, , superOptions = ''] = line.slice(sep + 3).split(' ');
    if (root === undefined || mountPoint === undefined) continue;
    if (fstype !== 'cgroup' && fstype !== 'cgroup2') continue;
    mounts.push({
      version: fstype === 'cgroup2' ? 2 : 1,
      options: superOptions.split(','),
      root: unescape(root),
      mountPoint: unescape(mountPoint),
    });
  }
  return mounts;
}

/** Where cgroup `path` of a hierarchy shows in a mount of it; null when the mount shows another subtree. */
function underMount(m: CgroupMount, path: string): string | null {
  const root = m.root.replace(/\/+$/, '');
  // A cgroup outside this process's cgroup namespace reads as "/../…": not under any mount here.
  if (path.split('/').includes('..')) return null;
  if (path !== root && !path.startsWith(`${root}/`)) return null;
  return `${m.mountPoint.replace(/\/+$/, '')}${path.slice(root.length).replace(/\/+$/, '')}`;
}

/**
 * The cgroup.procs file of the cgroup that `pid` is in (its cpuacct cgroup on v1, its unified one
 * on v2); null when it cannot be found. The mounts come from `${proc}/self/mountinfo`; where that
 * cannot be read, the usual layout under `root` is assumed (v1 hierarchies in root/<controllers>,
 * v2 at root).
 */
export function cgroupProcsFile(pid: number, root = CGROUP_ROOT, proc = '/proc'): string | null {
  let text: string;
  try {
    text = readFileSync(`${proc}/${pid}/cgroup`, 'utf8');
  } catch {
    return null;
  }
  let mounts: CgroupMount[] | null;
  try {
    mounts = parseCgroupMounts(readFileSync(`${proc}/self/mountinfo`, 'utf8'));
  } catch {
    mounts = null;
  }
  // v1: "4:cpu,cpuacct:/docker/<id>"; v2: "0::/system.slice/docker-<id>.scope". A hybrid system
  // has both; there the v1 cpuacct line is the container's (v2 holds only systemd's own tree).
  // "id:controllers:path", where the path may itself hold a colon.
  const lines = text
    .trim()
    .split('\n')
    .map((l) => /^([^:]*):([^:]*):(.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => [m[1]!, m[2]!, m[3]!] as const);
  const v1 = lines.find(([, c]) => c.split(',').includes('cpuacct'));
  const v2 = lines.find(([, c]) => c === '');
  for (const line of [v1, v2]) {
    if (line === undefined) continue;
    const [, controllers, path] = line;
    if (mounts === null)
      return controllers === ''
        ? `${root}${path}/cgroup.procs`
        : `${root}/${controllers}${path}/cgroup.procs`;
    const dirs = mounts
      .filter((m) =>
        controllers === '' ? m.version === 2 : m.version === 1 && m.options.includes('cpuacct'),
      )
      .map((m) => underMount(m, path))
      .filter((d): d is string => d !== null);
    // The same hierarchy may be mounted more than once: the first mount where the cgroup is.
    const dir = dirs.find((d) => existsSync(`${d}/cgroup.procs`)) ?? dirs[0];
    if (dir !== undefined) return `${dir}/cgroup.procs`;
  }
  return null;
}

/** The pids listed in a cgroup.procs file now; none when it is gone (the container stopped). */
export function procsIn(file: string): number[] {
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map(Number);
  } catch {
    return [];
  }
}
