// What every end-to-end run must show of its own cross-checks, on every target and runtime: none
// violated, every acknowledged write verified, and each check listed once, held or not evaluated
// with its reason. A test does not filter the checks: where one does not apply, it says so itself.
import assert from 'node:assert/strict';
import { CHECKS } from '../../src/report/self-check.js';
import type { RunResult } from '../../src/report/result.js';

export function assertSelfCheckClean(result: RunResult): void {
  const c = result.selfCheck;
  assert.deepEqual(c.violations, [], `the run's own cross-checks: ${c.violations.join('; ')}`);
  assert.equal(result.writes.unverified, 0, 'every acknowledged write verified by the final read');
  const notEvaluated = c.notEvaluated ?? [];
  for (const n of notEvaluated) assert.ok(n.why.length > 0, `${n.check} not evaluated, and no reason given`);
  assert.deepEqual(
    [...c.checked, ...notEvaluated.map((n) => n.check)].sort(),
    Object.values(CHECKS).sort(),
    'every check listed once, held or not evaluated',
  );
}
