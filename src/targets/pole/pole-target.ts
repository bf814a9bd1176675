// src/targets/pole/: the POLE node (src/node/) as a target: the Target (this file), its members wherever
// they run (pole-members.ts).
//
// The POLE node (src/node/) as a target: `pole-bench node` processes that emit their events as
// JSON lines, written to through the node's own client, checked by a fence write and reads.
import { connectPoleWriter } from '../../load/write-client.js';
import { POLE_MEMBERS } from './pole-member-kind.js';
import type { Target } from '../target.js';

export const poleTarget: Target = {
  name: 'pole',
  title: 'the POLE node (`pole`)',
  hasOracles: true,
  // Its oracles name the rule (leaders.oracle): this is only what POLE is.
  electionRule: 'pole',
  tracesWrites: true,
  protocol: 'pole',
  // A member answers a read from the state it has applied (docs/node.md): a follower may lag the
  // leader, and a deposed leader keeps answering until it learns it lost.
  readModes: { default: { describe: 'READ, from the member’s own applied state', promises: 'session' } },
  // measure/node-floor.ts warmUp: 3 s took 5-8 ms off the first seconds of the e2e fixture.
  warmUpMs: 3_000,
  connect: connectPoleWriter,
  // Every write of the POLE load goes to a fresh path: nothing to prepare.
  prepareWrites: () => Promise.resolve(),
  members: POLE_MEMBERS,
  // The plan and the final read load when a run needs them: the registry, and with it this
  // file, is loaded by every command and load agent.
  planMembers: async (p) => (await import('./pole-members.js')).planPoleMembers(p),
  checkAckedWrites: async (o) =>
    (await import('./pole-checker.js')).checkAckedWrites({
      leader: o.leader,
      nodes: o.nodes,
      acked: o.acked,
      runId: o.runId,
    }),
};
