// Finding a container's processes from its init pid: the cgroup line of /proc/<pid>/cgroup, v1 and
// v2, through the mount table to the cgroup's process list, on a host and inside a container.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { cgroupProcsFile, parseCgroupMounts, procsIn } from '../../src/measure/container-procs.js';

describe('container processes', () => {
  it('reads cgroup v1 (the cpuacct line) and v2 (the unified line) and lists the pids', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pole-bench-cgroup-'));
    try {
      const proc = join(dir, 'proc');
      const root = join(dir, 'cgroup');
      await mkdir(join(proc, '41'), { recursive: true });
      await mkdir(join(proc, '42'), { recursive: true });
      await writeFile(
        join(proc, '41', 'cgroup'),
        '12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n',
      );
      await writeFile(join(proc, '42', 'cgroup'), '0::/system.slice/docker-def.scope\n');
      const v1 = cgroupProcsFile(41, root, proc);
      const v2 = cgroupProcsFile(42, root, proc);
      assert.equal(v1, join(root, 'cpu,cpuacct', 'docker', 'abc', 'cgroup.procs'));
      assert.equal(v2, join(root, 'system.slice', 'docker-def.scope', 'cgroup.procs'));
      await mkdir(join(root, 'cpu,cpuacct', 'docker', 'abc'), { recursive: true });
      await writeFile(v1!, '41\n57\n');
      assert.deepEqual(procsIn(v1!), [41, 57]);
      assert.deepEqual(procsIn(v2!), [], 'a cgroup that is gone has no processes');
      assert.equal(cgroupProcsFile(43, root, proc), null);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('resolves the path through the mount table: a host, a container without and with a cgroup namespace', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pole-bench-cgroup-'));
    try {
      const proc = join(dir, 'proc');
      const fs = join(dir, 'sys', 'fs', 'cgroup');
      const mountinfo = (lines: string[]) =>
        writeFile(join(proc, 'self', 'mountinfo'), lines.join('\n') + '\n');
      const cgroupOf = (pid: number, text: string) =>
        mkdir(join(proc, String(pid)), { recursive: true }).then(() =>
          writeFile(join(proc, String(pid), 'cgroup'), text),
        );
      await mkdir(join(proc, 'self'), { recursive: true });

      // A hybrid host (v1 hierarchies and the unified one at …/unified): a docker container's cpuacct
      // cgroup, under the hierarchy's root.
      await mountinfo([
        `22 1 0:21 / ${dir}/sys rw,nosuid - sysfs sysfs rw`,
        `30 22 0:27 / ${fs} rw,relatime - tmpfs tmpfs rw,mode=755`,
        `31 30 0:28 / ${fs}/cpu rw,relatime shared:9 - cgroup cgroup rw,cpu`,
        `32 30 0:29 / ${fs}/cpuacct rw,relatime shared:10 - cgroup cgroup rw,cpuacct`,
        `40 30 0:37 / ${fs}/unified rw,relatime - cgroup2 cgroup2 rw`,
      ]);
      await cgroupOf(
        41,
        '9:name=systemd:/docker/abc\n2:cpuacct:/docker/abc\n1:cpu:/docker/abc\n0::/system.slice/docker.service\n',
      );
      assert.equal(
        cgroupProcsFile(41, '/nowhere', proc),
        join(fs, 'cpuacct', 'docker', 'abc', 'cgroup.procs'),
      );

      // Inside that container (no cgroup namespace on v1): its cgroup reads /docker/abc, and the
      // cpuacct mount shows just that subtree, so its processes are at the mount point itself.
      await mountinfo([
        `700 650 0:29 /docker/abc ${fs}/cpuacct ro,nosuid - cgroup cpuacct rw,cpuacct`,
        `701 650 0:30 /docker/abc ${fs}/cpu,cpuset ro,nosuid - cgroup cpu rw,cpu,cpuset`,
      ]);
      await mkdir(join(fs, 'cpuacct'), { recursive: true });
      await writeFile(join(fs, 'cpuacct', 'cgroup.procs'), '1\n41\n');
      assert.equal(cgroupProcsFile(41, '/nowhere', proc), join(fs, 'cpuacct', 'cgroup.procs'));
      assert.deepEqual(procsIn(cgroupProcsFile(41, '/nowhere', proc)!), [1, 41]);
      // A container started there (nested): a subtree of it.
      await cgroupOf(42, '2:cpuacct:/docker/abc/docker/def\n');
      assert.equal(
        cgroupProcsFile(42, '/nowhere', proc),
        join(fs, 'cpuacct', 'docker', 'def', 'cgroup.procs'),
      );
      // A cgroup outside the mounted subtree is not to be found here.
      await cgroupOf(43, '2:cpuacct:/docker/xyz\n');
      assert.equal(cgroupProcsFile(43, '/nowhere', proc), null);

      // A v2 container with its own cgroup namespace: "0::/", and the cgroup is the mount itself.
      await mountinfo([`800 750 0:40 / ${fs} ro,nosuid - cgroup2 cgroup rw,nsdelegate`]);
      await cgroupOf(44, '0::/\n');
      assert.equal(cgroupProcsFile(44, '/nowhere', proc), join(fs, 'cgroup.procs'));
      // … and a process outside that namespace reads "/../…": not here.
      await cgroupOf(45, '0::/../other.scope\n');
      assert.equal(cgroupProcsFile(45, '/nowhere', proc), null);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reads mountinfo: only cgroup mounts, their options, root and mount point (escapes decoded)', () => {
    const mounts = parseCgroupMounts(
      [
        '25 1 0:22 / /proc rw - proc proc rw',
        '32 30 0:29 /a\\040b /sys/fs/cgroup/cpu,cpuacct rw shared:10 master:3 - cgroup cgroup rw,cpu,cpuacct',
        '40 30 0:37 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate',
      ].join('\n'),
    );
    assert.deepEqual(mounts, [
      {
        version: 1,
        options: ['rw', 'cpu', 'cpuacct'],
        root: '/a b',
        mountPoint: '/sys/fs/cgroup/cpu,cpuacct',
      },
      { version: 2, options: ['rw', 'nsdelegate'], root: '/', mountPoint: '/sys/fs/cgroup' },
    ]);
  });

  it('finds this very process in its own cgroup', () => {
    const file = cgroupProcsFile(process.pid);
    assert.ok(file, 'no cgroup line for this process');
    assert.ok(procsIn(file).includes(process.pid), `${process.pid} not in ${file}`);
  });
});
