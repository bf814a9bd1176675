// Labels on everything a Docker run creates: what `pole-bench clean` and the next run look for.
// The harness's pid and boot id say whether the run that made a container can still clean it up.
import { readFileSync } from 'node:fs';

export const DOCKER_LABELS = {
  /** Present on everything pole-bench creates. */
  managed: 'pole-bench',
  run: 'pole-bench.run',
  role: 'pole-bench.role',
  node: 'pole-bench.node',
  harnessPid: 'pole-bench.harness-pid',
  bootId: 'pole-bench.boot-id',
  /**
   * 'true' on what outlives the command that made it (the local swarm's hosts and network, which
   * `pole-bench swarm down` removes): never an orphan, so a run starting leaves it alone; a plain
   * `pole-bench clean` still removes it.
   */
  persistent: 'pole-bench.persistent',
} as const;

export function bootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return 'unknown';
  }
}

export function runLabels(runId: string): Record<string, string> {
  return {
    [DOCKER_LABELS.managed]: 'true',
    [DOCKER_LABELS.run]: runId,
    [DOCKER_LABELS.harnessPid]: String(process.pid),
    [DOCKER_LABELS.bootId]: bootId(),
  };
}

/** Whether the harness that created something with these labels is gone (so it is left over). */
export function isOrphan(labels: Record<string, string> | undefined): boolean {
  if (labels?.[DOCKER_LABELS.persistent] === 'true') return false;
  const pid = Number(labels?.[DOCKER_LABELS.harnessPid]);
  if (labels?.[DOCKER_LABELS.bootId] !== bootId() || !Number.isInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
}
