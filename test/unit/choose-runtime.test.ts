import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chooseShaping } from '../../src/runtime/choose-runtime.js';
import { RUNTIME_NAMES, runtimeLacks } from '../../src/vocabulary/runtimes.js';
import { TARGET_NAMES } from '../../src/vocabulary/names.js';
import { InputError } from '../../src/util/input-error.js';

const NO_NETEM = { available: false, reason: 'this kernel has no sch_netem' };
const NETEM = { available: true, reason: 'the kernel has netem' };

test('auto shaping: netem in containers where the kernel has it, else the relay, saying why', () => {
  assert.deepEqual(chooseShaping('auto', 'docker', 3, NETEM), {
    kind: 'netem',
    reason: 'auto: the kernel has netem',
  });
  const relay = chooseShaping('auto', 'docker', 3, NO_NETEM);
  assert.equal(relay.kind, 'relay');
  assert.match(relay.reason, /no sch_netem.*relay/);
  assert.equal(chooseShaping('auto', 'process', 3, NETEM).kind, 'relay');
  assert.equal(chooseShaping('auto', 'docker', 1, NETEM).kind, 'none');
});

test('--shaping netem without netem, or on the process runtime, is bad input with the reason (exit 2)', () => {
  assert.throws(
    () => chooseShaping('netem', 'docker', 3, NO_NETEM),
    (e: unknown) => e instanceof InputError && e.exitCode === 2 && /--shaping.*no sch_netem/.test(e.message),
  );
  assert.throws(
    () => chooseShaping('netem', 'process', 3, NETEM),
    (e: unknown) =>
      e instanceof InputError && /its own network stack \(docker or swarm\), not process/.test(e.message),
  );
  assert.deepEqual(chooseShaping('relay', 'docker', 3, NETEM), { kind: 'relay', reason: 'asked for' });
});

test('--shaping netem on a swarm: the members’ hosts decide, not this machine’s kernel; auto stays the relay', () => {
  assert.equal(chooseShaping('netem', 'swarm', 3, NO_NETEM).kind, 'netem');
  assert.equal(chooseShaping('auto', 'swarm', 3, NETEM).kind, 'relay');
});

test('every runtime runs every target: each runs any member plan', () => {
  for (const r of RUNTIME_NAMES)
    for (const t of TARGET_NAMES) assert.equal(runtimeLacks(r, t), undefined, `${r} ${t}`);
});
