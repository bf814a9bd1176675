// What every POLE run must show of its nodes' glibc tunables, whichever runtime ran it: each
// node's own process read the ones the report names, and the run held the two together itself.
import assert from 'node:assert/strict';
import type { RunResult } from '../../src/report/result.js';

export const TUNABLES_CHECK = 'every POLE node started with the glibc tunables the report names';

/** Every member of the topology read `environment.nodeTunables` itself, which names malloc's huge pages. */
export function checkNodeTunables(result: RunResult): void {
  const members = result.topology.datacenters.flatMap((d) => d.nodes);
  const tunables = result.environment.nodeTunables;
  assert.match(tunables ?? '', /(^|:)glibc\.malloc\.hugetlb=1(:|$)/);
  assert.deepEqual(
    result.environment.nodeTunablesSeen,
    Object.fromEntries(members.map((m) => [m, tunables])),
  );
  assert.ok(result.selfCheck.checked.includes(TUNABLES_CHECK), result.selfCheck.checked.join('; '));
  assert.deepEqual(
    result.selfCheck.violations.filter((v) => v.startsWith(TUNABLES_CHECK)),
    [],
  );
}
