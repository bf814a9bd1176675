#!/usr/bin/env node
// What an O_DSYNC write of a log record costs on this machine's disk, growing the file against
// writing over zeros already there (a node's log segments are kept zero-filled ahead of their
// records: src/node/log/disk-actions.ts). Per write: the time it took, the writer's CPU (user and
// system) and its voluntary context switches. Nothing of pole-bench runs here.
// Usage: node scripts/dsync-probe.js [DIR] [WRITES] [BYTES] [ROUNDS]   (default the OS temp dir, 2000, 1100, 3)
import { closeSync, constants, fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { resourceUsage } from 'node:process';

const base = process.argv[2] ?? tmpdir();
const writes = Number(process.argv[3] ?? 2000);
const bytes = Number(process.argv[4] ?? 1100);
const rounds = Number(process.argv[5] ?? 3);
const dir = mkdtempSync(join(base, 'pole-bench-dsync-'));
const record = Buffer.alloc(bytes, 7);

/** Zeros over the whole length the records will take, made durable before the timed writes. */
function zeroFill(path) {
  const fd = openSync(path, constants.O_RDWR | constants.O_CREAT, 0o644);
  const zeros = Buffer.alloc(1 << 20);
  for (let at = 0; at < writes * bytes; at += zeros.length) writeSync(fd, zeros, 0, zeros.length, at);
  fsyncSync(fd);
  closeSync(fd);
}

function measure(overZeros) {
  const path = join(dir, overZeros ? 'zeros' : 'grows');
  if (overZeros) zeroFill(path);
  const fd = openSync(path, constants.O_RDWR | constants.O_CREAT | constants.O_DSYNC, 0o644);
  const r0 = resourceUsage();
  const t0 = performance.now();
  for (let i = 0; i < writes; i++) writeSync(fd, record, 0, bytes, i * bytes);
  const ms = performance.now() - t0;
  const r1 = resourceUsage();
  closeSync(fd);
  rmSync(path);
  const cpu = r1.userCPUTime + r1.systemCPUTime - r0.userCPUTime - r0.systemCPUTime;
  return {
    us: (1000 * ms) / writes,
    cpuUs: cpu / writes,
    switches: (r1.voluntaryContextSwitches - r0.voluntaryContextSwitches) / writes,
  };
}

try {
  console.log(`${writes} O_DSYNC writes of ${bytes} bytes in ${dir}`);
  for (let r = 1; r <= rounds; r++) {
    for (const overZeros of [false, true]) {
      const m = measure(overZeros);
      console.log(
        `round ${r}, ${overZeros ? 'over zeros  ' : 'growing file'}: ${m.us.toFixed(1)} µs a write, ${m.cpuUs.toFixed(1)} µs CPU, ${m.switches.toFixed(2)} context switches`,
      );
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
