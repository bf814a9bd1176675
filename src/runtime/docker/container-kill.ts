// A SIGKILL to a container, and when it struck, on the clock of the kernel the container runs on.
//
// Neither end of the API call says when. Stamped before the call, the kill looks early by however
// long the daemon takes to deliver the signal (80-90 ms on a Docker-in-Docker host, where it runs
// `runc kill`); stamped at the container's exit as the daemon records it (State.FinishedAt), it
// looks late by the time the daemon takes to learn of the exit: on a busy swarm host ZooKeeper's
// followers had lost their leader 106 ms before that stamp (docs/benchmarks.md). The daemon's
// own `kill` event is logged once the runtime has delivered the signal, so it is the stamp: the
// signal plus the way back from `runc kill`, a few ms. The other two bound it.
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type Docker from 'dockerode';
import { withTimeout } from '../../util/with-timeout.js';

/** How long the daemon's record of the kill may take to reach its event stream, after the kill returned. */
const KILL_EVENT_WAIT_MS = 2_000;
/** How long a killed container may take to be seen exited (a JVM with a large heap frees it first). */
const EXIT_WAIT_MS = 30_000;

export interface ContainerKill {
  /** Wall ms just before the kill was asked for. */
  readonly askedAt: number;
  /** Wall ms of the daemon's `kill` event (the signal delivered); null if none came (already dead). */
  readonly signalledAt: number | null;
  /** Wall ms of the container's exit as its daemon recorded it; null if not known. */
  readonly exitedAt: number | null;
}

/**
 * The instant the kill struck: the daemon's `kill` event, held within what the two API ends say
 * (never before it was asked for); the exit, then the request, where the daemon logged none.
 */
export function killInstant(k: ContainerKill): number {
  // A stamp before the request is another clock's error (or FinishedAt's zero value): not the kill.
  const exited = k.exitedAt !== null && k.exitedAt >= k.askedAt ? k.exitedAt : null;
  const signalled = k.signalledAt !== null && k.signalledAt >= k.askedAt ? k.signalledAt : null;
  if (signalled !== null) return exited !== null ? Math.min(signalled, exited) : signalled;
  return exited ?? k.askedAt;
}

/** SIGKILL to `container` and wait for its exit; an already stopped container is no error. */
export async function killContainer(
  docker: Docker,
  container: Docker.Container,
  wallNowMs: () => number,
): Promise<ContainerKill> {
  // Subscribed before the kill, so that its event cannot pass unseen. A daemon that will not stream
  // its events still gets the kill: the stamp falls back to the exit.
  const stream = (await docker
    .getEvents({
      filters: JSON.stringify({ type: ['container'], event: ['kill'], container: [container.id] }),
    })
    .catch(() => null)) as unknown as Readable | null;
  try {
    const signalled = stream === null ? Promise.resolve(null) : killEventTime(stream, container.id);
    const askedAt = wallNowMs();
    const killed = await container.kill({ signal: 'SIGKILL' }).then(
      () => true,
      (err: Error) => {
        // Already dead (it crashed, or an earlier kill): what a kill wants.
        if (!/is not running/.test(err.message)) throw err;
        return false;
      },
    );
    // The daemon answers the kill after logging its event: it is in the stream, or on its way.
    const signalledAt = killed
      ? await withTimeout(signalled, KILL_EVENT_WAIT_MS, 'the kill event').catch(() => null)
      : null;
    await withTimeout(
      container.wait(),
      EXIT_WAIT_MS,
      `the exit of container ${container.id.slice(0, 12)} after SIGKILL`,
    );
    const state = ((await container.inspect()) as { State?: { FinishedAt?: string } }).State;
    return { askedAt, signalledAt, exitedAt: rfc3339Ms(state?.FinishedAt) };
  } finally {
    stream?.destroy();
  }
}

/** The time of the first `kill` event of container `id` in a daemon's event stream (JSON lines). */
export function killEventTime(stream: Readable, id: string): Promise<number | null> {
  return new Promise((resolve) => {
    const lines = createInterface({ input: stream });
    const done = (t: number | null): void => {
      resolve(t); // first: closing the lines resolves with null
      lines.close();
    };
    lines.on('line', (line) => {
      let e: { Action?: string; status?: string; id?: string; Actor?: { ID?: string }; timeNano?: number };
      try {
        e = JSON.parse(line) as typeof e;
      } catch {
        return;
      }
      const action = e.Action ?? e.status;
      if (action === 'kill' && (e.Actor?.ID ?? e.id) === id && typeof e.timeNano === 'number')
        done(e.timeNano / 1e6);
    });
    lines.on('close', () => resolve(null));
    stream.on('error', () => done(null));
  });
}

/** An RFC 3339 time with up to ns (Docker's), as epoch ms keeping the sub-ms digits; null if not one. */
export function rfc3339Ms(text: string | undefined): number | null {
  const m = text === undefined ? null : /^(.*T\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)$/.exec(text);
  if (!m) return null;
  const whole = Date.parse(`${m[1]}${m[3]}`);
  return Number.isNaN(whole) ? null : whole + Number(`0${m[2] ?? ''}`) * 1000;
}
