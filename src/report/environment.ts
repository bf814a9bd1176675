// Where a run ran, for the report's Environment section: results from different machines are only
// comparable when you can see that they are different machines.
import { arch, cpus, hostname, platform, release } from 'node:os';
import type { Environment } from './result.js';

/** This machine and process; `poleBenchVersion` comes from the caller (oclif knows it). */
export function collectEnvironment(poleBenchVersion: string): Environment {
  const cpuList = cpus();
  return {
    nodeVersion: process.version,
    os: `${platform()} ${arch()}`,
    kernel: release(),
    cpus: cpuList.length,
    cpuModel: cpuList[0]?.model.trim() ?? 'unknown',
    poleBenchVersion,
    hostname: hostname(),
  };
}
