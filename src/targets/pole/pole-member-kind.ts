// What the POLE node's members are, before any is planned: light, since every command that lists
// the targets loads it (the plan, pole-members.ts, is loaded when a run plans them).
import type { MemberKind } from '../member-plan.js';

export const POLE_MEMBERS: MemberKind = {
  image: 'node',
  ports: { peer: 7000, client: 7001, http: 7002 },
  keptPorts: [],
  stop: 'stdin',
  startTimeoutMs: 30_000,
  ownEtcHosts: false,
  keepsLog: false,
};
