// Each fault action carried out where it acts: on a member through the runtime (kill, restart,
// pause, resume), on links through the shaping (partition, isolate, heal, link). A shaping that
// cannot do what a fault asks fails the run, saying so, rather than carry on without the fault.
import type { NodeId } from '../vocabulary/names.js';
import type { Runtime } from '../runtime/runtime.js';
import type { FaultSpec } from '../topology/topology-schema.js';
import type { Topology } from '../topology/topology.js';
import type { FaultBook } from './fault-book.js';
import type { ResolvedFault } from './fault-target.js';

/**
 * Carries out `f` on its resolved target, struck at wall ms `at`, and books the node it took down
 * or the links it cut. Resolves with when it took effect: for a kill, once the process is gone.
 */
export async function carryOut(
  rt: Runtime,
  t: Topology,
  f: FaultSpec,
  r: ResolvedFault,
  book: FaultBook,
  at: number,
): Promise<number> {
  const target = r.target;
  switch (f.action) {
    case 'kill': {
      const gone = await rt.kill(target);
      book.wentDown(target);
      return gone;
    }
    case 'pause':
      rt.pause(target);
      book.wentDown(target);
      return at;
    case 'restart':
      await rt.restart(target);
      book.cameBack(target);
      return at;
    case 'resume':
      rt.resume(target);
      book.cameBack(target);
      return at;
    case 'partition':
    case 'isolate': {
      const rest = t.nodes.map((n) => n.id).filter((id) => !r.cutOff.includes(id));
      await cutLinks(rt, r.cutOff, rest, true, f.action);
      book.cuts.push({ a: r.cutOff, b: rest });
      return at;
    }
    case 'heal':
      await healCuts(rt, book);
      return at;
    case 'link': {
      const [a, b] = f.datacenters as [string, string];
      if (!(await rt.shaping.setRtt(a, b, f.rttMs as number)))
        throw new Error(`the ${rt.shaping.kind} shaping cannot change a link's delay during a run`);
      return at;
    }
  }
}

/** Restores every link still cut. */
export async function healCuts(rt: Runtime, book: FaultBook): Promise<void> {
  for (const c of book.cuts.splice(0)) await cutLinks(rt, c.a, c.b, false, 'heal');
}

/** Cuts or restores the links between two sets of members, or says why this shaping cannot. */
async function cutLinks(rt: Runtime, a: NodeId[], b: NodeId[], cut: boolean, what: string): Promise<void> {
  if (!(await rt.shaping.cut(a, b, cut)))
    throw new Error(`the ${rt.shaping.kind} shaping cannot cut links (${what}); use --shaping relay`);
}
