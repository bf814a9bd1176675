// Finding a container's processes from its init pid: the cgroup line of /proc/<pid>/cgroup, v1 and
// v2, to the cgroup's process list.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { cgroupProcsFile, procsIn } from '../../src/measure/container-procs.js';

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

  it('finds this very process in its own cgroup', () => {
    const file = cgroupProcsFile(process.pid);
    assert.ok(file, 'no cgroup line for this process');
    assert.ok(procsIn(file).includes(process.pid), `${process.pid} not in ${file}`);
  });
});
