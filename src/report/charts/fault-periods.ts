// Faults as periods for the charts' shading: a kill lasts until the same node is restarted, a
// pause until it resumes, a partition or an isolation until the next heal, a changed link until the
// same link changes again; a link set back to its configured delay only ends one. A fault nothing
// undid lasts to the end of the load. Pure.
import type { FaultMark } from '../../vocabulary/names.js';

export interface FaultPeriod {
  /** Seconds from the load start. */
  readonly fromS: number;
  readonly toS: number;
  /** e.g. "kill p5", "partition caltech". */
  readonly label: string;
  /** What kind of fault, for the colour: node (kill, pause), network (partition, isolate, oneway, bridge, ring), link (delay). */
  readonly kind: 'node' | 'network' | 'link';
}

/**
 * Periods of the faults that start one (restart, resume, heal and a link's restore only end them),
 * in time order. `configuredRttMs(a, b)`: the topology's round trip of a link, to tell a restore.
 */
export function faultPeriods(
  faults: readonly FaultMark[],
  endS: number,
  configuredRttMs: (a: string, b: string) => number | undefined = () => undefined,
): FaultPeriod[] {
  const restores = (f: FaultMark): boolean => {
    const m = /^([^-\s]+)-([^-\s]+) rtt ([\d.]+) ms$/.exec(f.node);
    return m !== null && configuredRttMs(m[1] as string, m[2] as string) === Number(m[3]);
  };
  const sorted = [...faults].sort((a, b) => a.atS - b.atS);
  const periods: FaultPeriod[] = [];
  sorted.forEach((f, i) => {
    const later = sorted.slice(i + 1);
    const until = (ends: (g: FaultMark) => boolean): number => later.find(ends)?.atS ?? endS;
    const label = `${f.action} ${f.node}`;
    switch (f.action) {
      case 'kill':
        periods.push({
          fromS: f.atS,
          toS: until((g) => g.action === 'restart' && g.node === f.node),
          label,
          kind: 'node',
        });
        break;
      case 'pause':
        periods.push({
          fromS: f.atS,
          toS: until((g) => g.action === 'resume' && g.node === f.node),
          label,
          kind: 'node',
        });
        break;
      case 'partition':
      case 'isolate':
      case 'oneway':
      case 'bridge':
      case 'ring':
        // Until a heal of every cut, or of this fault's own.
        periods.push({
          fromS: f.atS,
          toS: until((g) => g.action === 'heal' && (g.undoes === undefined || g.undoes === f.ref)),
          label,
          kind: 'network',
        });
        break;
      case 'link':
        if (restores(f)) break;
        periods.push({
          fromS: f.atS,
          toS: until((g) => g.action === 'link' && linkOf(g) === linkOf(f)),
          label,
          kind: 'link',
        });
        break;
      case 'restart':
      case 'resume':
      case 'heal':
      case 'roll':
        break;
    }
  });
  return periods.map((p) => ({ ...p, toS: Math.max(p.fromS, Math.min(p.toS, endS)) }));
}

/** A link fault's mark names the link and its new delay ("caltech-slac rtt 60 ms"): the link alone. */
function linkOf(f: FaultMark): string {
  return f.node.split(' ')[0] ?? f.node;
}
