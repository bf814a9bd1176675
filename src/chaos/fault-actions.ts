// Each fault action carried out where it acts: on members through the runtime (kill, restart,
// pause, resume), on links through the shaping (partition, isolate, oneway, bridge, ring, heal, link). A shaping that
// cannot do what a fault asks fails the run, saying so, rather than carry on without the fault.
import type { Runtime } from '../runtime/runtime.js';
import type { FaultSpec } from '../topology/topology-schema.js';
import type { FaultBook } from './fault-book.js';
import type { Cut, ResolvedFault } from './fault-target.js';
import { wallNowMs } from '../util/wall-clock.js';

/**
 * Carries out `f` on its resolved target, struck at wall ms `at`, and books the nodes it took down
 * or the links it cut. Resolves with when it took effect: for a kill, once the processes are gone.
 * A roll is the schedule's own (it runs a kill and a restart per member).
 */
export async function carryOut(
  rt: Runtime,
  f: FaultSpec,
  r: ResolvedFault,
  book: FaultBook,
  at: number,
): Promise<number> {
  switch (f.action) {
    case 'kill': {
      const gone = await Promise.all(r.nodes.map((n) => rt.kill(n)));
      for (const n of r.nodes) book.wentDown(n);
      return Math.max(at, ...gone);
    }
    case 'pause':
      for (const n of r.nodes) {
        rt.pause(n);
        book.wentDown(n);
      }
      return at;
    case 'restart':
      await Promise.all(r.nodes.map((n) => rt.restart(n)));
      for (const n of r.nodes) book.cameBack(n);
      return at;
    case 'resume':
      for (const n of r.nodes) {
        rt.resume(n);
        book.cameBack(n);
      }
      return at;
    case 'partition':
    case 'isolate':
    case 'oneway':
    case 'bridge':
    case 'ring':
      for (const c of r.cuts) {
        await cutLinks(rt, c, true, f.action);
        book.cuts.push(c);
      }
      // Carried out once every cut is in place (a kill, once its process is gone): the writes a
      // leader acknowledged while the shaping was still cutting are not part of its outage.
      return r.cuts.length > 0 ? Math.max(at, wallNowMs()) : at;
    case 'heal':
      await healCuts(rt, book, f.undoes);
      return at;
    case 'link': {
      const [a, b] = f.datacenters as [string, string];
      if (!(await rt.shaping.setRtt(a, b, f.rttMs as number)))
        throw new Error(`the ${rt.shaping.kind} shaping cannot change a link's delay during a run`);
      return at;
    }
    case 'roll':
      throw new Error('a roll is carried out by the schedule, member by member');
  }
}

/** Restores every link still cut, or only those the fault `ref` cut. */
export async function healCuts(rt: Runtime, book: FaultBook, ref?: number): Promise<void> {
  const healed = book.cuts.filter((c) => ref === undefined || c.ref === ref);
  for (const c of healed) {
    await cutLinks(rt, c, false, 'heal');
    book.cuts.splice(book.cuts.indexOf(c), 1);
  }
}

/** Cuts or restores the links of `c`, or says why this shaping cannot. */
async function cutLinks(rt: Runtime, c: Cut, cut: boolean, what: string): Promise<void> {
  if (!(await rt.shaping.cut(c.a, c.b, cut, c.oneWay)))
    throw new Error(`the ${rt.shaping.kind} shaping cannot cut links (${what}); use --shaping relay`);
}
