// One poll of the swarm's tasks for every waiter of a run. Each member's start had two watchers
// (its task at the gate, its task dying before `started`) polling the manager every 100 ms: ten
// list calls a second during bring-up, each one parsed by the manager and by the harness, on a
// machine whose two cores the bring-up keeps busy. Now one call per period names every service
// someone waits on, and each waiter picks from its own service's tasks.

/** The fields of a swarm task the runtime reads. */
export interface TaskInfo {
  ID: string;
  ServiceID?: string;
  NodeID?: string;
  NetworksAttachments?: Array<{ Network?: { Spec?: { Name?: string } }; Addresses?: string[] }>;
  DesiredState?: string;
  Status?: {
    State?: string;
    Err?: string;
    ContainerStatus?: { ContainerID?: string };
    PortStatus?: { Ports?: Array<{ TargetPort?: number; PublishedPort?: number }> };
  };
}

interface Waiter {
  readonly serviceId: string;
  readonly pick: (tasks: TaskInfo[]) => TaskInfo | undefined;
  readonly deadline: number;
  readonly timeoutMs: number;
  readonly stop: () => boolean;
  readonly resolve: (t: TaskInfo) => void;
  readonly reject: (e: unknown) => void;
  last: string;
}

/** A task list's states, for an error: "running, failed (no such image)". */
export function taskStates(tasks: readonly TaskInfo[]): string {
  return tasks.map((t) => `${t.Status?.State}${t.Status?.Err ? ` (${t.Status.Err})` : ''}`).join(', ');
}

export class TaskPoller {
  private readonly waiters = new Set<Waiter>();
  private polling = false;

  constructor(
    /** The tasks of these services (one list call). */
    private readonly list: (serviceIds: readonly string[]) => Promise<TaskInfo[]>,
    private readonly periodMs = 200,
  ) {}

  /**
   * Resolves with the first task `pick` finds among the service's tasks (it may throw to give
   * up); rejects after timeoutMs with the tasks' last states. Once `stop` says so, never settles
   * (a watcher that is no longer wanted).
   */
  until(
    serviceId: string,
    pick: (tasks: TaskInfo[]) => TaskInfo | undefined,
    timeoutMs: number,
    stop: () => boolean = () => false,
  ): Promise<TaskInfo> {
    return new Promise<TaskInfo>((resolve, reject) => {
      const deadline = Date.now() + timeoutMs;
      this.waiters.add({ serviceId, pick, deadline, timeoutMs, stop, resolve, reject, last: 'no task yet' });
      if (!this.polling) {
        this.polling = true;
        // After this turn: the waiters added in it go in the first call together.
        queueMicrotask(() => void this.poll());
      }
    });
  }

  private async poll(): Promise<void> {
    try {
      while (this.waiters.size > 0) {
        const ids = [...new Set([...this.waiters].map((w) => w.serviceId))];
        let tasks: TaskInfo[] | undefined;
        let failed: unknown;
        try {
          tasks = await this.list(ids);
        } catch (e) {
          failed = e;
        }
        for (const w of [...this.waiters]) this.offer(w, tasks, failed);
        if (this.waiters.size > 0) await new Promise((r) => setTimeout(r, this.periodMs));
      }
    } finally {
      this.polling = false;
    }
  }

  private offer(w: Waiter, tasks: TaskInfo[] | undefined, failed: unknown): void {
    if (w.stop()) {
      this.waiters.delete(w);
      return;
    }
    if (tasks) {
      const own = tasks.filter((t) => t.ServiceID === w.serviceId);
      try {
        const hit = w.pick(own);
        if (hit) {
          this.waiters.delete(w);
          w.resolve(hit);
          return;
        }
      } catch (e) {
        this.waiters.delete(w);
        w.reject(e);
        return;
      }
      w.last = taskStates(own) || w.last;
    } else {
      // The manager did not answer: as before the poller was shared, the wait ends with its error.
      this.waiters.delete(w);
      w.reject(failed);
      return;
    }
    if (Date.now() >= w.deadline) {
      this.waiters.delete(w);
      w.reject(
        new Error(
          `no task of service ${w.serviceId.slice(0, 12)} got there within ${w.timeoutMs} ms: ${w.last}`,
        ),
      );
    }
  }
}
