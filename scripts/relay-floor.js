#!/usr/bin/env node
// What a relay's data path costs here written for Node (pole-bench's relay, as a run uses it) and
// written in C (a plain epoll loop and one timerfd, embedded below and built with `cc`): the same
// paced load of 1 kB messages and a ping probe through one 20 ms route (10 ms each way) to an echo
// on its own thread, alternated. CPU per relayed message (a message and its echo are two) from the
// relay's own threads (pole-bench's: the relay and clock threads' schedstat; C: its process's).
// The C relay is a measurement, not a part of pole-bench: one route, a fixed delay, no jitter,
// faults, stats or back-pressure. Needs `npm run build` first, and a C compiler.
// Usage: node scripts/relay-floor.js [RATE,RATE,...] [SECONDS] [ROUNDS]   (default 5000,500 3 2)
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startEchoServer } from '../dist/src/shaping/relay/echo-server.js';
import { DelayRelay } from '../dist/src/shaping/relay/delay-relay.js';
import { measureRtt } from '../dist/src/shaping/relay/rtt-probe.js';
import { pacedWrites } from '../dist/src/bench/paced-writes.js';
import { processCpuMs } from '../dist/src/util/thread-cpu.js';

const rates = (process.argv[2] ?? '5000,500').split(',').map(Number);
const seconds = Number(process.argv[3] ?? 3);
const rounds = Number(process.argv[4] ?? 2);
const ONE_WAY_MS = 10;

const cRelay = `// One route of a delay relay in C, a measurement only: listen on an ephemeral port (printed), for
// each client dial the target, carry bytes each way after a fixed one-way delay. epoll for the
// sockets, one timerfd (absolute CLOCK_MONOTONIC) for the next release; every chunk due within
// 30 us is released in one pass, as pole-bench's relay does.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

typedef struct chunk { struct chunk *next; uint64_t at; size_t len; char data[]; } chunk;
typedef struct dir { int src, dst; chunk *head, *tail; } dir;
typedef struct conn { dir d[2]; } conn;
#define MAXC 64
static conn conns[MAXC]; static int nconn = 0;
static uint64_t delay_ns; static int tfd, ep; static uint64_t armed = 0;

static uint64_t now_ns(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000ull + t.tv_nsec; }
static void arm(uint64_t at) {
  if (armed && armed <= at) return;
  armed = at; struct itimerspec it = {0}; it.it_value.tv_sec = at / 1000000000ull; it.it_value.tv_nsec = at % 1000000000ull;
  timerfd_settime(tfd, TFD_TIMER_ABSTIME, &it, 0);
}
static void add(int fd, uint64_t tag) { struct epoll_event e = {.events = EPOLLIN, .data.u64 = tag}; epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e); }
static int dial(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1; struct sockaddr_in a = {0}; a.sin_family = AF_INET; a.sin_port = htons(port); a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, (void *)&a, sizeof a)) { perror("connect"); exit(1); }
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one); return fd;
}
static void release_due(void) {
  uint64_t t = now_ns(), next = 0;
  for (int i = 0; i < nconn; i++) for (int k = 0; k < 2; k++) {
    dir *d = &conns[i].d[k];
    while (d->head && d->head->at <= t + 30000) { chunk *c = d->head; (void)!write(d->dst, c->data, c->len); d->head = c->next; if (!d->head) d->tail = 0; free(c); }
    if (d->head && (!next || d->head->at < next)) next = d->head->at;
  }
  armed = 0; if (next) arm(next);
}
int main(int argc, char **argv) {
  if (argc < 3) return 2;
  int tport = atoi(argv[1]); delay_ns = (uint64_t)(atof(argv[2]) * 1e6);
  int l = socket(AF_INET, SOCK_STREAM, 0), one = 1; setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = {0}; a.sin_family = AF_INET; a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t alen = sizeof a;
  if (bind(l, (void *)&a, sizeof a) || listen(l, 16) || getsockname(l, (void *)&a, &alen)) { perror("listen"); return 1; }
  ep = epoll_create1(0); tfd = timerfd_create(CLOCK_MONOTONIC, 0);
  add(l, 1ull << 62); add(tfd, 1ull << 61);
  printf("%d\\n", ntohs(a.sin_port)); fflush(stdout);
  static char buf[65536];
  for (;;) {
    struct epoll_event ev[16]; int n = epoll_wait(ep, ev, 16, -1);
    for (int i = 0; i < n; i++) {
      uint64_t tag = ev[i].data.u64;
      if (tag == 1ull << 62) { if (nconn == MAXC) return 1; int c = accept(l, 0, 0); setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one); int t = dial(tport);
        conn *k = &conns[nconn]; k->d[0] = (dir){c, t, 0, 0}; k->d[1] = (dir){t, c, 0, 0}; add(c, (uint64_t)nconn * 2); add(t, (uint64_t)nconn * 2 + 1); nconn++; continue; }
      if (tag == 1ull << 61) { uint64_t x; (void)!read(tfd, &x, sizeof x); release_due(); continue; }
      dir *d = &conns[tag / 2].d[tag % 2];
      ssize_t r = read(d->src, buf, sizeof buf);
      if (r <= 0) { epoll_ctl(ep, EPOLL_CTL_DEL, d->src, 0); continue; }
      chunk *c = malloc(sizeof *c + r); c->next = 0; c->at = now_ns() + delay_ns; c->len = r; memcpy(c->data, buf, r);
      if (d->tail) d->tail->next = c; else d->head = c; d->tail = c;
      arm(c->at);
    }
  }
}
`;

/** A relay on a port in front of `target`, and its CPU so far (ms). */
async function startRelay(kind, target, binary) {
  if (kind === 'node') {
    const d = { delayMs: ONE_WAY_MS, jitterMs: 0, distribution: 'normal' };
    const relay = await DelayRelay.start({
      seed: 1,
      routes: [{ name: 'r', target: { host: '127.0.0.1', port: target }, forward: d, backward: d }],
    });
    return {
      port: relay.port('r'),
      cpuMs: async () => {
        const w = (await relay.stats()).worker;
        return w.cpuMs + w.clockCpuMs;
      },
      stop: () => relay.close(),
    };
  }
  const child = spawn(binary, [String(target), String(ONE_WAY_MS)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise((resolve) => child.stdout.once('data', (d) => resolve(Number(String(d)))));
  return {
    port,
    cpuMs: async () => processCpuMs(child.pid),
    stop: async () => child.kill('SIGKILL'),
  };
}

/** Open loop, 1 kB messages. */
function paced(socket, rate, secs) {
  return pacedWrites(socket, Buffer.alloc(1024, 0x6c), rate, secs);
}

async function measure(kind, rate, binary) {
  const echo = await startEchoServer({ inWorker: true });
  const relay = await startRelay(kind, echo.port, binary);
  try {
    const socket = connect({ host: '127.0.0.1', port: relay.port });
    await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    socket.setNoDelay(true);
    let echoed = 0;
    socket.on('data', (b) => (echoed += b.length));
    const warm = await paced(socket, rate, 1); // warm-up, not counted
    const settled = performance.now() + 2000;
    while (echoed < warm * 1024 && performance.now() < settled) await new Promise((r) => setTimeout(r, 5));
    const [c0, e0] = [await relay.cpuMs(), echoed];
    const [sent, probe] = await Promise.all([
      paced(socket, rate, seconds),
      measureRtt({
        host: '127.0.0.1',
        port: relay.port,
        samples: Math.floor((seconds * 1000) / 25) - 2,
        intervalMs: 5,
      }),
    ]);
    const until = performance.now() + 2000;
    while (echoed - e0 < sent * 1024 && performance.now() < until) await new Promise((r) => setTimeout(r, 5));
    const used = (await relay.cpuMs()) - c0;
    socket.destroy();
    const back = (echoed - e0) / (sent * 1024);
    const us = (used * 1000) / (2 * (sent + probe.pings));
    return `${kind} ${us.toFixed(1)} µs per message (${(back * 100).toFixed(1)} % echoed), RTT p50 ${probe.p50Ms.toFixed(2)} mean ${probe.meanMs.toFixed(2)} ms`;
  } finally {
    await relay.stop();
    await echo.close();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'pole-relay-floor-'));
try {
  writeFileSync(join(dir, 'relay.c'), cRelay);
  const binary = join(dir, 'relay');
  const cc = spawnSync('cc', ['-O2', '-o', binary, join(dir, 'relay.c')], { stdio: 'inherit' });
  if (cc.status !== 0) throw new Error('cc could not build the C relay (is a C compiler installed?)');
  for (const rate of rates) {
    console.log(
      `${rate} × 1 kB/s each way for ${seconds} s through a ${2 * ONE_WAY_MS} ms route, ${rounds} rounds`,
    );
    for (let r = 1; r <= rounds; r++) {
      console.log(`  ${await measure('node', rate, binary)}`);
      console.log(`  ${await measure('c', rate, binary)}`);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
