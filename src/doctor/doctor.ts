// src/doctor/: what this machine and user can run, and for what cannot, why and how to fix it.
//
// Every answer comes from the probe the run itself asks (each runtime's cannotRun, registered in
// runtime/registry.ts; the election backends' finders), so `doctor` and a run never
// disagree: what doctor calls runnable starts, and what it refuses a run refuses with the same
// words.
import { findPostgres } from '../election/postgres/local-postgres.js';
import { findZookeeper } from '../targets/zookeeper/zk-install.js';
import { targetNamed } from '../targets/registry.js';
import { TARGET_NAMES, type TargetName } from '../vocabulary/names.js';
import type { RuntimeName } from '../vocabulary/runtimes.js';
import { runtimeKinds } from '../runtime/registry.js';

export interface DoctorCell {
  readonly target: TargetName;
  readonly runtime: RuntimeName;
  readonly ok: boolean;
  /** Why not, and what to do (absent where it can run). */
  readonly why?: string;
}

export interface DoctorReport {
  readonly user: { readonly uid: number | null; readonly root: boolean };
  readonly runs: readonly DoctorCell[];
  /** `pole-bench election --backend …`: db (PostgreSQL) and zookeeper. */
  readonly election: readonly {
    readonly backend: 'db' | 'zookeeper';
    readonly ok: boolean;
    readonly why?: string;
  }[];
  /** What needs root, and why: nothing else does. */
  readonly needsRoot: readonly string[];
}

export async function doctor(version: string): Promise<DoctorReport> {
  const uid = process.getuid?.() ?? null;
  const runs: DoctorCell[] = [];
  for (const target of TARGET_NAMES)
    for (const kind of runtimeKinds()) {
      const why = await kind.cannotRun(targetNamed(target), version);
      runs.push({ target, runtime: kind.name, ok: why === undefined, ...(why !== undefined ? { why } : {}) });
    }
  const found = (p: Promise<unknown>): Promise<string | undefined> =>
    p.then(
      () => undefined,
      (err: Error) => err.message,
    );
  const db = await found(findPostgres());
  const zk = await found(findZookeeper());
  return {
    user: { uid, root: uid === 0 },
    runs,
    election: [
      { backend: 'db', ok: db === undefined, ...(db !== undefined ? { why: db } : {}) },
      { backend: 'zookeeper', ok: zk === undefined, ...(zk !== undefined ? { why: zk } : {}) },
    ],
    needsRoot: [
      'scripts/install-*.sh (what the targets and the election backends need): they install Debian packages (apt-get)',
      'scripts/ci-docker.sh start: installs and starts a Docker engine',
      '`pole-bench image build --offline`: debootstrap makes the base image from Debian’s packages, which takes root (chroot, device nodes); with --base-image it needs only access to the Docker daemon',
    ],
  };
}

/** The report as a person reads it. */
export function formatDoctor(r: DoctorReport): string {
  const lines = [
    `user: ${r.user.root ? 'root' : `uid ${r.user.uid ?? '?'} (not root)`}`,
    '',
    'run --target T --runtime R:',
  ];
  for (const c of r.runs)
    lines.push(`  ${c.ok ? 'ok ' : 'no '} ${c.target} on ${c.runtime}${c.why ? `: ${c.why}` : ''}`);
  lines.push('', 'election --backend B:');
  for (const e of r.election)
    lines.push(`  ${e.ok ? 'ok ' : 'no '} ${e.backend}${e.why ? `: ${e.why}` : ''}`);
  lines.push('', 'needs root (nothing else does):', ...r.needsRoot.map((l) => `  ${l}`));
  return lines.join('\n');
}
