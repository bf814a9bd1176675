// Does this kernel have netem? The only sure answer is to ask the kernel for a netem qdisc, so the
// probe does that on a veth pair inside a throwaway network namespace (nothing outside it changes;
// on a modular kernel the attempt may load sch_netem, exactly as using netem would). Where no
// namespace can be made (not root, no iproute2), it falls back to what the system tells without
// touching anything: /sys/module, the kernel config, `modprobe -n`. The kernel-side evidence is
// gathered either way, so a "no" says why and what to do instead.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { release } from 'node:os';
import { gunzipSync } from 'node:zlib';
import { runCommand, type CommandResult } from './run-command.js';

export interface NetemProbeResult {
  readonly available: boolean;
  /** One sentence a user can act on, e.g. "this kernel has no sch_netem (…); use --shaping relay". */
  readonly reason: string;
}

export interface NetemProbeOptions {
  /** Prefix of the scratch namespace's name (a pid and random suffix are added). */
  readonly nsPrefix?: string;
}

const FALLBACK = 'use --shaping relay (the userspace delay relay), or a kernel with sch_netem';

/** Decide whether netem can be used here; never throws, always removes its namespace. */
export async function probeNetem(opts: NetemProbeOptions = {}): Promise<NetemProbeResult> {
  const ns = `${opts.nsPrefix ?? 'pole-bench-probe'}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const trial = await tryNetemInNamespace(ns);
  if (trial.kind === 'accepted')
    return {
      available: true,
      reason: `the kernel accepted a netem qdisc in a scratch namespace${trial.note}`,
    };
  const kernel = await kernelEvidence();
  if (trial.kind === 'refused')
    return {
      available: false,
      reason: `this kernel has no sch_netem: tc refused a netem qdisc in a scratch namespace (${trial.detail}); ${kernel.text}; ${FALLBACK}${trial.note}`,
    };
  // No trial possible: go by the evidence alone, and say it was not tried.
  const untried = `could not try netem (${trial.detail})`;
  if (kernel.verdict === 'present')
    return { available: true, reason: `${kernel.text}; ${untried}, so it may still fail when applied` };
  if (kernel.verdict === 'absent')
    return {
      available: false,
      reason: `this kernel has no sch_netem: ${kernel.text}; ${untried}; ${FALLBACK}`,
    };
  return {
    available: false,
    reason: `cannot tell whether this kernel has sch_netem: ${untried}; ${kernel.text}; run as root with iproute2 to probe, or ${FALLBACK}`,
  };
}

type Trial =
  | { kind: 'accepted'; note: string }
  | { kind: 'refused'; detail: string; note: string }
  | { kind: 'untried'; detail: string };

async function tryNetemInNamespace(ns: string): Promise<Trial> {
  const added = await runCommand(['ip', 'netns', 'add', ns]);
  if (added.code !== 0) return { kind: 'untried', detail: `ip netns add: ${describe(added)}` };
  let result: Trial = { kind: 'untried', detail: 'the trial did not finish' };
  try {
    result = await netemOnVeth(ns);
  } finally {
    const del = await runCommand(['ip', 'netns', 'del', ns]);
    if (del.code !== 0)
      result = withNote(result, `; warning: could not remove namespace ${ns}: ${describe(del)}`);
  }
  return result;
}

async function netemOnVeth(ns: string): Promise<Trial> {
  // A veth pair born inside the namespace: both ends stay there and vanish with it. (A dummy
  // device would do too, but not every kernel has one; veth is what container runtimes need.)
  const veth = await runCommand([
    'ip',
    '-n',
    ns,
    'link',
    'add',
    'pbprobe0',
    'type',
    'veth',
    'peer',
    'name',
    'pbprobe1',
  ]);
  if (veth.code !== 0) return { kind: 'untried', detail: `ip link add … type veth: ${describe(veth)}` };
  const tc = await runCommand([
    'tc',
    '-n',
    ns,
    'qdisc',
    'add',
    'dev',
    'pbprobe0',
    'root',
    'netem',
    'delay',
    '1ms',
  ]);
  if (tc.code === 0) return { kind: 'accepted', note: '' };
  if (tc.code === null) return { kind: 'untried', detail: `tc: ${describe(tc)}` };
  return { kind: 'refused', detail: `tc qdisc add … netem delay 1ms: ${describe(tc)}`, note: '' };
}

function withNote(t: Trial, note: string): Trial {
  if (t.kind === 'untried') return { ...t, detail: t.detail + note };
  return { ...t, note: t.note + note };
}

interface KernelEvidence {
  readonly verdict: 'present' | 'absent' | 'unknown';
  /** What was found, e.g. "no loadable-module support (no /proc/modules); CONFIG_NET_SCH_NETEM is not set". */
  readonly text: string;
}

async function kernelEvidence(): Promise<KernelEvidence> {
  const facts: string[] = [];
  let verdict: KernelEvidence['verdict'] = 'unknown';
  const loaded = existsSync('/sys/module/sch_netem');
  if (loaded) {
    verdict = 'present';
    facts.push('sch_netem is loaded (/sys/module/sch_netem)');
  }
  const modular = existsSync('/proc/modules');
  if (!modular) facts.push('the kernel has no loadable-module support (no /proc/modules)');
  const config = netemConfig();
  if (config !== undefined) {
    facts.push(`its config says ${config.line}`);
    if (config.value === 'y' || (config.value === 'm' && modular)) verdict = 'present';
    else if (!loaded) verdict = 'absent';
  }
  const modprobe = await runCommand(['modprobe', '-n', 'sch_netem'], 5000);
  if (modprobe.code === 0) {
    facts.push('modprobe -n sch_netem finds the module (modprobe sch_netem would load it)');
    if (verdict === 'unknown') verdict = 'present';
  } else {
    facts.push(`modprobe -n sch_netem: ${describe(modprobe)}`);
  }
  return { verdict, text: facts.join(', ') };
}

/** CONFIG_NET_SCH_NETEM from /proc/config.gz or /boot/config-<release>, if either is readable. */
function netemConfig(): { value: 'y' | 'm' | 'n'; line: string } | undefined {
  const text = readConfig();
  if (text === undefined) return undefined;
  const set = /^CONFIG_NET_SCH_NETEM=([ym])$/m.exec(text);
  if (set !== null) return { value: set[1] === 'y' ? 'y' : 'm', line: `"${set[0]}"` };
  // Kconfig writes "# … is not set" for an option that is off; absence means the same.
  return { value: 'n', line: '"# CONFIG_NET_SCH_NETEM is not set"' };
}

function readConfig(): string | undefined {
  try {
    return gunzipSync(readFileSync('/proc/config.gz')).toString('utf8');
  } catch {
    try {
      return readFileSync(`/boot/config-${release()}`, 'utf8');
    } catch {
      return undefined;
    }
  }
}

function describe(r: CommandResult): string {
  if (r.failure !== undefined) return r.failure.includes('ENOENT') ? 'not installed' : r.failure;
  const msg = (r.stderr.trim() || r.stdout.trim()).split('\n').slice(-1)[0] ?? '';
  return msg === '' ? `exit ${r.code}` : `"${msg}"`;
}
