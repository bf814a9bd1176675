// The local swarm's state folder and file without Docker: where it is, what a valid file holds,
// the file and field a bad one is blamed on, and that `swarm down` removes only what `up` made.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { SwarmInputError } from '../../src/runtime/swarm/local/swarm-plan.js';
import {
  checkStateDir,
  hostDockerHost,
  readSwarmState,
  removeStateDir,
  stateFilePath,
  swarmStateDir,
  type SwarmState,
  writeSwarmState,
} from '../../src/runtime/swarm/local/swarm-state.js';
import { InputError } from '../../src/util/input-error.js';

function state(dir: string): SwarmState {
  const host = (i: number, role: 'manager' | 'worker') => ({
    name: `pole-bench-swarm-${i}`,
    dc: `d${i}`,
    role,
    containerId: `c${i}`,
    address: `172.30.0.${i + 1}`,
    nodeId: `n${i}`,
    dockerHost: hostDockerHost(dir, `pole-bench-swarm-${i}`),
  });
  return {
    version: 1,
    createdAt: '2025-01-01T00:00:00.000Z',
    dockerHost: hostDockerHost(dir, 'pole-bench-swarm-1'),
    network: { name: 'pole-bench-swarm', id: 'net', subnet: '172.30.0.0/16' },
    ingress: false,
    hostImage: 'pole-bench-dind:0.1.0',
    hosts: [host(1, 'manager'), host(2, 'worker')],
    images: [{ tag: 'pole-bench-node:0.1.0', id: 'sha256:abc' }],
    skippedImages: [{ tag: 'pole-bench-zookeeper:0.1.0', reason: 'not built' }],
  };
}

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'pole-swarm-state-'));
}

test('the state folder: $POLE_SWARM_STATE, else $XDG_STATE_HOME/pole-bench/swarm, else ~/.local/state/…', () => {
  assert.equal(swarmStateDir({ POLE_SWARM_STATE: '/x/y' }), '/x/y');
  assert.equal(swarmStateDir({ XDG_STATE_HOME: '/st' }), '/st/pole-bench/swarm');
  assert.equal(swarmStateDir({}), join(homedir(), '.local', 'state', 'pole-bench', 'swarm'));
  assert.equal(
    hostDockerHost('/st/pole-bench/swarm', 'pole-bench-swarm-1'),
    'unix:///st/pole-bench/swarm/hosts/pole-bench-swarm-1/docker.sock',
  );
});

test('written and read back whole; the folder is 0700 and the file 0600', () => {
  const parent = tempDir();
  const dir = join(parent, 'swarm');
  try {
    assert.equal(readSwarmState(dir), undefined);
    const s = state(dir);
    const file = writeSwarmState(dir, s);
    assert.equal(file, stateFilePath(dir));
    assert.deepEqual(readSwarmState(dir), s);
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.match(readFileSync(file, 'utf8'), /"dockerHost": "unix:\/\//);
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
});

test('a bad state file is an input error naming the file, line and field', () => {
  const dir = tempDir();
  try {
    const s = state(dir);
    writeFileSync(
      stateFilePath(dir),
      JSON.stringify({ ...s, hosts: s.hosts.map((h) => ({ ...h, role: 'manager' })) }, null, 2),
    );
    assert.throws(
      () => readSwarmState(dir),
      (e: unknown) =>
        e instanceof InputError &&
        e.exitCode === 2 &&
        e.file === stateFilePath(dir) &&
        e.field === 'hosts' &&
        /expected exactly one manager, found 2/.test(e.message),
    );
    writeFileSync(stateFilePath(dir), JSON.stringify({ ...s, dockerHost: 'tcp://127.0.0.1:2375' }, null, 2));
    assert.throws(
      () => readSwarmState(dir),
      (e: unknown) => e instanceof InputError && e.field === 'dockerHost' && e.line !== undefined,
    );
    assert.throws(() => writeSwarmState(dir, { ...s, hosts: [] }), /hosts/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a state folder too deep for a unix socket is refused, naming the variable that moves it', () => {
  checkStateDir('/root/.local/state/pole-bench/swarm', 'pole-bench-swarm-16');
  assert.throws(
    () => checkStateDir(`/${'x'.repeat(80)}`, 'pole-bench-swarm-16'),
    (e: unknown) =>
      e instanceof SwarmInputError && e.flag === 'POLE_SWARM_STATE' && /too deep/.test(e.message),
  );
});

test('removing the state takes only the state file and the hosts folder', () => {
  const dir = tempDir();
  try {
    writeSwarmState(dir, state(dir));
    mkdirSync(join(dir, 'hosts', 'pole-bench-swarm-1'), { recursive: true });
    writeFileSync(join(dir, 'notes.txt'), 'the user’s own file');
    assert.equal(removeStateDir(dir), true);
    assert.equal(existsSync(stateFilePath(dir)), false);
    assert.equal(existsSync(join(dir, 'hosts')), false);
    assert.equal(existsSync(join(dir, 'notes.txt')), true);
    rmSync(join(dir, 'notes.txt'));
    assert.equal(removeStateDir(dir), false);
    assert.equal(existsSync(dir), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
