// Where a run ran, for the report's Environment section: results from different machines are only
// comparable when you can see that they are different machines.
import { readFileSync } from 'node:fs';
import { arch, cpus, hostname, platform, release } from 'node:os';
import type { Environment } from './result.js';
import { nodeTunables } from '../node/node-process-env.js';

/**
 * This machine and process; `poleBenchVersion` comes from the caller (oclif knows it). For a run
 * of POLE nodes, also the glibc tunables they started with and this kernel's THP mode: together
 * they say whether a killed node's memory was freed in huge pages, which made its detection
 * ~10 ms sooner here (node-process-env.ts).
 */
export function collectEnvironment(poleBenchVersion: string, target?: string): Environment {
  const cpuList = cpus();
  const thp = transparentHugePages();
  return {
    nodeVersion: process.version,
    os: `${platform()} ${arch()}`,
    kernel: release(),
    cpus: cpuList.length,
    cpuModel: cpuList[0]?.model.trim() ?? 'unknown',
    poleBenchVersion,
    hostname: hostname(),
    ...(target === 'pole' ? { nodeTunables: nodeTunables(process.env['GLIBC_TUNABLES']) } : {}),
    ...(thp !== undefined ? { transparentHugePages: thp } : {}),
  };
}

/** The kernel's THP mode, the bracketed word of /sys's `enabled` (always, madvise, never); Linux only. */
function transparentHugePages(): string | undefined {
  try {
    return /\[(\w+)\]/.exec(readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'utf8'))?.[1];
  } catch {
    return undefined;
  }
}
