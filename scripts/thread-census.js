#!/usr/bin/env node
// Where the CPU and the wake-ups of a run go, thread by thread: for every process whose command
// line holds PATTERN (pole-bench's harness, nodes and agents by default), each thread's CPU (the
// kernel's runtime, /proc/PID/task/TID/schedstat) and voluntary context switches (each one a sleep,
// so a wake-up after it) over SECONDS. Run it beside a run; threads under 0.3 % of a core and 5
// wake-ups a second are summed per process, not listed. `npm run build` first.
// Usage: node scripts/thread-census.js [SECONDS] [PATTERN]      (default 6 and bin/run.js)
import { readdirSync, readFileSync } from 'node:fs';
import { threadCpuMs } from '../dist/src/util/thread-cpu.js';

const seconds = Number(process.argv[2] ?? 6);
const pattern = process.argv[3] ?? 'bin/run.js';

/** pid → its command line, for the processes that match. */
function processes() {
  const out = new Map();
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d) && Number(d) !== process.pid)) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
      if (cmd.includes(pattern)) out.set(pid, cmd);
    } catch {
      // Gone since the listing.
    }
  }
  return out;
}

/** "pid/tid" → { cpu ms, voluntary switches } for every thread of `pids`. */
function snapshot(pids) {
  const out = new Map();
  for (const pid of pids)
    for (const tid of (() => {
      try {
        return readdirSync(`/proc/${pid}/task`);
      } catch {
        return [];
      }
    })()) {
      const cpu = threadCpuMs(`/proc/${pid}/task/${tid}/schedstat`);
      let switches = null;
      try {
        switches = Number(
          /voluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8'))[1],
        );
      } catch {
        // Gone since the listing.
      }
      if (cpu !== null && switches !== null) out.set(`${pid}/${tid}`, { cpu, switches });
    }
  return out;
}

const procs = processes();
const before = snapshot(procs.keys());
await new Promise((r) => setTimeout(r, seconds * 1000));
const after = snapshot(procs.keys());
let allWakes = 0;
let allCpu = 0;
for (const [pid, cmd] of procs) {
  const rows = [];
  const rest = { cpu: 0, wakes: 0, threads: 0 };
  for (const [key, b] of after) {
    const [p, tid] = key.split('/');
    const a = before.get(key);
    if (p !== pid || a === undefined) continue;
    const pct = ((b.cpu - a.cpu) / (seconds * 1000)) * 100;
    const wakes = (b.switches - a.switches) / seconds;
    allCpu += pct;
    allWakes += wakes;
    if (pct >= 0.3 || wakes >= 5) rows.push({ tid: tid === pid ? 'main' : tid, pct, wakes });
    else Object.assign(rest, { cpu: rest.cpu + pct, wakes: rest.wakes + wakes, threads: rest.threads + 1 });
  }
  console.log(`${pid} ${cmd.slice(0, 100)}`);
  for (const r of rows)
    console.log(
      `  thread ${r.tid}: ${r.pct.toFixed(1)} % of a core, ${r.wakes.toFixed(0)} wake-ups/s` +
        (r.wakes > 0 ? `, ${((r.pct * 10000) / r.wakes).toFixed(0)} µs a wake-up` : ''),
    );
  if (rest.threads > 0)
    console.log(
      `  ${rest.threads} other threads: ${rest.cpu.toFixed(1)} % of a core, ${rest.wakes.toFixed(0)} wake-ups/s`,
    );
}
console.log(`all: ${allCpu.toFixed(1)} % of a core, ${allWakes.toFixed(0)} wake-ups/s over ${seconds} s`);
