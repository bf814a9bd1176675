// Applying a node's tc commands (from netem-plan.ts) and reading back how much traffic each htb
// class carried, from `tc -s class show dev X`, which is how a test or a report shows that each
// peer's packets went through its data center's class.

/**
 * Runs one command (argv, no shell) where it belongs, e.g. inside a node's namespace or holder, and
 * rejects if it fails. Whatever it resolves with (e.g. stdout) is ignored.
 */
export type CommandExec = (argv: string[]) => Promise<unknown>;
/** Runs one command in the node's network namespace and resolves with its stdout. */
export type NetnsExec = (argv: string[]) => Promise<string>;

export interface ClassStats {
  readonly packets: number;
  readonly bytes: number;
}

/**
 * Run the commands in order, stopping at the first that fails (the error names it). A plan is for an
 * interface that still has its default qdisc: htb cannot be changed in place, so to shape it again
 * first delete the tree (`tc qdisc del dev <dev> root`).
 */
export async function applyPlan(commands: readonly (readonly string[])[], exec: CommandExec): Promise<void> {
  for (const [i, argv] of commands.entries()) {
    try {
      await exec([...argv]);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new Error(`shaping command ${i + 1} of ${commands.length} failed: ${argv.join(' ')}: ${why}`, {
        cause: err,
      });
    }
  }
}

/** Packets and bytes sent by every class on `dev`, by class id as tc prints it ("1:10"). */
export async function readClassStats(netnsExec: NetnsExec, dev: string): Promise<Map<string, ClassStats>> {
  return parseClassStats(await netnsExec(['tc', '-s', 'class', 'show', 'dev', dev]));
}

/**
 * Parse `tc -s class show` output: each class starts with a line `class <kind> <id> …` and its
 * counters follow on a line ` Sent <bytes> bytes <packets> pkt (dropped …)`.
 */
export function parseClassStats(text: string): Map<string, ClassStats> {
  const stats = new Map<string, ClassStats>();
  let current: string | undefined;
  for (const line of text.split('\n')) {
    const head = /^class \S+ (\S+)/.exec(line);
    if (head !== null) {
      current = head[1];
      continue;
    }
    const sent = /^\s+Sent (\d+) bytes (\d+) pkt/.exec(line);
    if (sent !== null && current !== undefined) {
      stats.set(current, { bytes: Number(sent[1]), packets: Number(sent[2]) });
      current = undefined;
    }
  }
  return stats;
}
