// The member events a runtime has read (JSON lines from each node's stdout, or what a target's
// translator made of its members' output), in arrival order, and waiting for one: shared by the
// process and Docker runtimes.
import type { ClusterEvent } from '../vocabulary/node-events.js';

export class EventBook {
  readonly events: ClusterEvent[] = [];
  private readonly waiters = new Set<{
    pred: (e: ClusterEvent) => boolean;
    resolve: (e: ClusterEvent) => void;
    reject: (err: Error) => void;
  }>();

  /** Takes one line of a node's output; lines that are not events are ignored. */
  line(line: string): void {
    let e: ClusterEvent;
    try {
      e = JSON.parse(line) as ClusterEvent;
    } catch {
      return;
    }
    if (typeof e.ev !== 'string') return;
    this.push(e);
  }

  /** Records one event and wakes whoever waits for it. */
  push(e: ClusterEvent): void {
    this.events.push(e);
    for (const w of this.waiters) {
      if (w.pred(e)) {
        this.waiters.delete(w);
        w.resolve(e);
      }
    }
  }

  /** The first event (from index `since` on) matching `pred`, waiting up to timeoutMs for it. */
  waitFor(pred: (e: ClusterEvent) => boolean, timeoutMs: number, since = 0): Promise<ClusterEvent> {
    for (let i = since; i < this.events.length; i++)
      if (pred(this.events[i]!)) return Promise.resolve(this.events[i]!);
    return new Promise((resolve, reject) => {
      const w = {
        pred,
        resolve: (e: ClusterEvent) => {
          clearTimeout(timer);
          resolve(e);
        },
        reject: (err: Error) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(w);
        reject(new Error(`no matching event within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.add(w);
    });
  }

  /** Ends every wait at once (rejected: the members are gone), so no timer outlives the run. */
  clearWaiters(): void {
    const all = [...this.waiters];
    this.waiters.clear();
    for (const w of all) w.reject(new Error('the members were stopped'));
  }
}
