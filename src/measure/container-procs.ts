// The processes of a container, for the self-check on the docker runtime: every process a
// container runs is in its cgroup, and the host's /proc sees them all (one kernel). From the
// container's init pid (`docker inspect` State.Pid) to the cgroup's process list, v1 or v2.
import { readFileSync } from 'node:fs';

const CGROUP_ROOT = '/sys/fs/cgroup';

/** The cgroup.procs file of the cgroup that `pid` is in; null when it cannot be found. */
export function cgroupProcsFile(pid: number, root = CGROUP_ROOT, proc = '/proc'): string | null {
  let text: string;
  try {
    text = readFileSync(`${proc}/${pid}/cgroup`, 'utf8');
  } catch {
    return null;
  }
  // v1: "4:cpu,cpuacct:/docker/<id>"; v2: "0::/system.slice/docker-<id>.scope".
  for (const line of text.trim().split('\n')) {
    const [, controllers, path] = line.split(':', 3) as [string, string, string];
    if (path === undefined) continue;
    if (controllers === '') return `${root}${path}/cgroup.procs`;
    if (controllers.split(',').includes('cpuacct')) return `${root}/${controllers}${path}/cgroup.procs`;
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
