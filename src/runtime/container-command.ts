// A planned member as a container's command, the same for the docker and the swarm runtime: the
// whole command line (the node image's entrypoint before this CLI's arguments), its variables,
// and, where it has files for its data directory or lines for its /etc/hosts, a shell that puts
// them there before it becomes the member.
import { THIS_CLI, type PlannedMember } from '../targets/member-plan.js';

/** Where the node image holds the package (docker/Dockerfile's WORKDIR). */
export const NODE_IMAGE_ROOT = '/opt/pole-bench';

/** The node image's entrypoint (docker/Dockerfile): this CLI inside a container. */
export const NODE_IMAGE_ENTRYPOINT = ['node', `${NODE_IMAGE_ROOT}/bin/run.js`] as const;

/** The member's whole command line in its container. */
export function containerArgv(m: PlannedMember): string[] {
  return m.program === THIS_CLI ? [...NODE_IMAGE_ENTRYPOINT, ...m.args] : [m.program, ...m.args];
}

/** Its variables ("NAME=value"). */
export function containerEnv(m: PlannedMember): string[] {
  return Object.entries(m.env ?? {}).map(([k, v]) => `${k}=${v}`);
}

/** One word for sh, whatever its bytes (single quotes; a quote inside as '\''). */
export function shellWord(w: string): string {
  return `'${w.replace(/'/g, `'\\''`)}'`;
}

/** Marks the lines a member's start added to its /etc/hosts: a restart adds none twice. */
const HOSTS_MARK = '# pole-bench';

/**
 * The shell lines that prepare a member's container before its command (docker: each start of
 * the same container; its /etc/hosts and data directory are its own and outlive a kill):
 * `dataFile(name)` is where the runtime put the data file `name` for the member to copy.
 */
export function prepareLines(
  m: PlannedMember,
  dataDir: string,
  dataFile: (name: string) => string,
): string[] {
  const lines: string[] = [];
  if (m.dataFiles && m.dataFiles.length > 0) {
    lines.push(`mkdir -p ${shellWord(dataDir)}`);
    for (const f of m.dataFiles) {
      const to = shellWord(`${dataDir}/${f.name}`);
      lines.push(`[ -e ${to} ] || cp ${shellWord(dataFile(f.name))} ${to}`);
    }
  }
  if (m.etcHosts && m.etcHosts.length > 0)
    lines.push(
      `grep -q ${shellWord(HOSTS_MARK)} /etc/hosts || printf '%s\\n' ${[HOSTS_MARK, ...m.etcHosts].map(shellWord).join(' ')} >> /etc/hosts`,
    );
  return lines;
}
