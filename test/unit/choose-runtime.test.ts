import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chooseRuntime, chooseShaping } from '../../src/runtime/choose-runtime.js';
import { AUTO_ORDER, runtimeKinds, runtimeOptions } from '../../src/runtime/registry.js';
import { RUNTIME_NAMES } from '../../src/vocabulary/runtimes.js';
import { targetNamed } from '../../src/targets/registry.js';
import type { Target } from '../../src/targets/target.js';
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

test('the registry holds every runtime of the vocabulary once, and auto ends on one every machine has', () => {
  assert.deepEqual(
    runtimeKinds().map((k) => k.name),
    [...RUNTIME_NAMES],
  );
  assert.equal(AUTO_ORDER.at(-1), 'process');
  // A runtime's own flag must not collide with another's.
  const flags = runtimeOptions().map((o) => o.option.flag);
  assert.equal(new Set(flags).size, flags.length);
});

/** The pole target, but with members this machine lacks: the process runtime must refuse it. */
function missingHere(why: string): Target {
  const pole = targetNamed('pole');
  return { ...pole, members: { ...pole.members, missingHere: async () => why } };
}

test('--runtime process refuses a target whose members are missing here, naming why (exit 2)', async () => {
  await assert.rejects(
    chooseRuntime('process', { version: '0.0.0', target: missingHere('no such binary'), datacenters: ['a'] }),
    (e: unknown) =>
      e instanceof InputError && e.exitCode === 2 && /--runtime process: no such binary/.test(e.message),
  );
});

test('--runtime auto without a Docker daemon takes processes and says why docker could not', async () => {
  const saved = process.env.DOCKER_HOST;
  process.env.DOCKER_HOST = 'unix:///nonexistent/pole-bench-test.sock';
  try {
    const c = await chooseRuntime('auto', {
      version: '0.0.0',
      target: targetNamed('pole'),
      datacenters: ['a', 'b'],
    });
    assert.equal(c.runtime, 'process');
    assert.match(c.reason, /^auto: no Docker daemon answers: /);
    // Nothing that can run here is left when processes cannot either: their refusal is the run's.
    await assert.rejects(
      chooseRuntime('auto', { version: '0.0.0', target: missingHere('not installed'), datacenters: ['a'] }),
      (e: unknown) => e instanceof InputError && /not installed/.test(e.message),
    );
  } finally {
    if (saved === undefined) delete process.env.DOCKER_HOST;
    else process.env.DOCKER_HOST = saved;
  }
});
