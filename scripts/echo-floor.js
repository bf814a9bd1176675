#!/usr/bin/env node
// What one message costs a process that only reads it and writes it back, in Node and, where a C
// compiler is present, in a plain epoll loop: the floor under any relay or node on this machine.
// The echo runs as its own process; this script sends it MESSAGES messages of BYTES bytes over
// loopback TCP, one at a time with GAP_MS between a reply and the next message (so the echo
// sleeps and is woken for each, as the relay and the nodes are at rest), and reads the echo's CPU
// from the kernel's per-thread runtime (/proc/PID/task/*/schedstat, ns) before and after.
// Nothing of pole-bench runs here but its reading of a process's CPU (`npm run build` first).
// Usage: node scripts/echo-floor.js [MESSAGES] [BYTES] [GAP_MS] [ROUNDS]   (default 3000 1024 1 3)
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processCpuMs } from '../dist/src/util/thread-cpu.js';

const messages = Number(process.argv[2] ?? 3000);
const bytes = Number(process.argv[3] ?? 1024);
const gapMs = Number(process.argv[4] ?? 1);
const rounds = Number(process.argv[5] ?? 3);

const nodeEcho = `
const s = require('node:net').createServer((c) => { c.setNoDelay(true); c.on('data', (d) => c.write(d)); });
s.listen(0, '127.0.0.1', () => console.log(s.address().port));`;

// One connection, level-triggered epoll, one read and one write per wake-up.
const cEcho = `
#include <stdio.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
int main(void) {
  int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  struct sockaddr_in a = {0};
  socklen_t n = sizeof a;
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(l, (void *)&a, sizeof a) || listen(l, 1) || getsockname(l, (void *)&a, &n)) return 1;
  printf("%d\\n", ntohs(a.sin_port));
  fflush(stdout);
  int c = accept(l, 0, 0);
  setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  int ep = epoll_create1(0);
  struct epoll_event e = {.events = EPOLLIN, .data.fd = c};
  epoll_ctl(ep, EPOLL_CTL_ADD, c, &e);
  static char buf[65536];
  for (;;) {
    if (epoll_wait(ep, &e, 1, -1) < 1) continue;
    ssize_t r = read(c, buf, sizeof buf);
    if (r <= 0) return 0;
    if (write(c, buf, r) != r) return 1;
  }
}`;

async function measure(label, command, args) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await new Promise((resolve, reject) => {
      child.once('error', reject);
      child.stdout.once('data', (d) => resolve(Number(String(d).trim())));
    });
    const socket = connect({ host: '127.0.0.1', port });
    await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    socket.setNoDelay(true);
    const message = Buffer.alloc(bytes, 0x65);
    let got = 0;
    let waiting = null;
    socket.on('data', (d) => {
      got += d.length;
      if (waiting !== null && got >= waiting.until) waiting.resolve();
    });
    const roundTrip = () =>
      new Promise((resolve) => {
        waiting = { until: got + bytes, resolve };
        socket.write(message);
      });
    // Warm-up, so that the figure is a steady state's and not the JIT's first steps.
    for (let i = 0; i < 200; i++) await roundTrip();
    const before = processCpuMs(child.pid);
    for (let i = 0; i < messages; i++) {
      if (gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
      await roundTrip();
    }
    const used = processCpuMs(child.pid) - before;
    socket.destroy();
    return { label, usPerMessage: (used * 1000) / messages };
  } finally {
    child.kill('SIGKILL');
  }
}

const dir = mkdtempSync(join(tmpdir(), 'pole-echo-floor-'));
try {
  let cBinary = null;
  writeFileSync(join(dir, 'echo.c'), cEcho);
  const cc = spawnSync('cc', ['-O2', '-o', join(dir, 'echo'), join(dir, 'echo.c')], { stdio: 'ignore' });
  if (cc.status === 0) cBinary = join(dir, 'echo');
  else console.log('no C compiler (cc): the Node echo only');
  console.log(`${messages} messages of ${bytes} B, ${gapMs} ms apart, ${rounds} rounds, alternated`);
  for (let r = 1; r <= rounds; r++) {
    const rows = [await measure('node', process.execPath, ['-e', nodeEcho])];
    if (cBinary !== null) rows.push(await measure('c', cBinary, []));
    console.log(
      `round ${r}: ${rows.map((x) => `${x.label} ${x.usPerMessage.toFixed(1)} µs`).join(', ')} of CPU per message`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
