#!/usr/bin/env node
// How long after SIGKILL a peer sees a process's TCP connection close, by how much memory the
// process holds. On Linux a dying process releases its memory (exit_mm) before it closes its files
// (exit_files), so a peer learns of the death only once the kernel has freed every page: the
// "detect" phase of a leader kill starts with that wait, whatever the node does. Nothing of
// pole-bench runs here: a plain Node child holding N MB (half in 1 MB buffers, half in small
// objects, as a node's log and tree would) connected to this process, killed ROUNDS times.
// Usage: node scripts/kill-close.js [MB,MB,...] [ROUNDS]     (default 0,100,300 and 7)
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { createServer } from 'node:net';

const sizes = (process.argv[2] ?? '0,100,300').split(',').map(Number);
const rounds = Number(process.argv[3] ?? 7);

/** The child: fills its memory, dials the port, says so, then idles. */
const childScript = (mb, port) => `
const keep = [];
for (let i = 0; i < ${Math.floor(mb / 2)}; i++) keep.push(Buffer.alloc(1 << 20, 1));
for (let i = 0; i < ${Math.ceil(mb / 2)} * 5000; i++) keep.push({ i, s: 'x' + i });
const s = require('net').connect(${port}, '127.0.0.1', () => s.write('ready'));
setInterval(() => {}, 1 << 30);`;

/** One kill: ms from the signal to the connection's close as this process sees it, and the child's RSS. */
function once(mb) {
  return new Promise((resolve, reject) => {
    let child;
    const srv = createServer((sock) => {
      sock.once('data', () => {
        const rssMb = readRssMb(child.pid);
        sock.on('error', () => {});
        sock.on('close', () => {
          const ms = performance.now() - t0;
          srv.close();
          resolve({ ms, rssMb });
        });
        const t0 = performance.now();
        child.kill('SIGKILL');
      });
    });
    srv.listen(0, '127.0.0.1', () => {
      child = spawn(process.execPath, ['-e', childScript(mb, srv.address().port)], { stdio: 'ignore' });
      child.once('error', reject);
    });
  });
}

function readRssMb(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
  } catch {
    return NaN;
  }
}

for (const mb of sizes) {
  const got = [];
  for (let r = 0; r < rounds; r++) got.push(await once(mb));
  const ms = got.map((g) => g.ms).sort((a, b) => a - b);
  const median = ms[Math.floor(ms.length / 2)];
  console.log(
    `${mb} MB filled (RSS ${got[0].rssMb} MB): kill → close ${ms.map((x) => x.toFixed(1)).join(' ')} ms, median ${median.toFixed(1)}`,
  );
}
