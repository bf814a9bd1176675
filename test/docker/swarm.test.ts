// `pole-bench swarm up` and `swarm down` for real: a 2-host swarm of DinD hosts on this machine's
// Docker, its nodes Ready and labelled, the node image in both engines, a service placed by its
// data center constraint on the right host, `up` again finding it up, and `down` leaving nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Docker from 'dockerode';
import { imageId } from '../../src/image/base-image.js';
import { engineAt, findSwarmResources } from '../../src/runtime/swarm/local/dind-host.js';
import type { SwarmDownResult, SwarmUpResult } from '../../src/runtime/swarm/local/local-swarm.js';
import { kernelHasIpvs } from '../../src/runtime/swarm/local/swarm-join.js';
import { DC_LABEL, dcConstraint } from '../../src/runtime/swarm/local/swarm-labels.js';
import { runCli } from '../support/run-cli.js';
import { dockerSkipReason, nodeImage } from './docker-env.js';

test('swarm up makes a 2-host swarm placed by data center, up again keeps it, down removes it all', async (t) => {
  const skip = await dockerSkipReason();
  if (skip) return t.skip(skip);
  const before = await findSwarmResources();
  if (before.hosts.length + before.networks.length > 0) {
    return t.skip('a local swarm is up on this machine already (pole-bench swarm down removes it)');
  }
  // A state folder of the test's own: a user's ~/.local/state is never touched.
  const stateDir = join(mkdtempSync(join(tmpdir(), 'pole-swarm-')), 's');
  const env = { ...process.env, POLE_SWARM_STATE: stateDir };
  const tag = await nodeImage();
  const nodeId = await imageId(tag);
  let down = false;
  try {
    const t0 = performance.now();
    const up = await runCli(
      ['swarm', 'up', '--nodes', '2', '--dcs', 'east,west', '--images', 'node', '--json'],
      env,
    );
    const upMs = performance.now() - t0;
    assert.equal(up.code, 0, up.stderr);
    const r = JSON.parse(up.stdout) as SwarmUpResult;
    t.diagnostic(
      `swarm up (2 hosts): ${(upMs / 1000).toFixed(1)} s; ${r.phases.map((p) => `${p.name} ${(p.ms / 1000).toFixed(1)} s`).join(', ')}`,
    );
    assert.ok(r.status === 'created' || r.status === 'replaced', r.status);
    assert.equal(r.dockerHost, `unix://${stateDir}/hosts/pole-bench-swarm-1/docker.sock`);
    assert.ok(existsSync(r.stateFile));
    const [manager, worker] = r.state.hosts;
    assert.ok(manager && worker);
    assert.deepEqual(
      [manager.role, manager.dc, worker.role, worker.dc],
      ['manager', 'east', 'worker', 'west'],
    );

    // Both nodes Ready, each with its data center, as the manager sees them.
    const m = engineAt(r.dockerHost);
    const nodes = (await m.listNodes()) as {
      ID: string;
      Description: { Hostname: string };
      Status: { State: string };
      Spec: { Role: string; Labels: Record<string, string> };
    }[];
    assert.deepEqual(
      nodes
        .map((n) => `${n.Description.Hostname} ${n.Spec.Role} ${n.Status.State} ${n.Spec.Labels[DC_LABEL]}`)
        .sort(),
      ['pole-bench-swarm-1 manager ready east', 'pole-bench-swarm-2 worker ready west'],
    );

    // Without IPVS (this kernel's case) the routing mesh cannot work, and its network is gone.
    assert.equal(r.state.ingress, kernelHasIpvs());
    const networks = (await m.listNetworks()) as { Name: string }[];
    assert.equal(
      networks.some((n) => n.Name === 'ingress'),
      r.state.ingress,
    );

    // The node image, the very build of this machine, is in both engines (a build made while
    // swarm up ran, on this shared machine, may be the one).
    const loadedId = r.state.images.find((i) => i.tag === tag)?.id;
    assert.ok(loadedId === nodeId || loadedId === (await imageId(tag)), `${loadedId} is no build of ${tag}`);
    for (const h of r.state.hosts) {
      const info = (await engineAt(h.dockerHost).getImage(tag).inspect()) as { Id: string };
      assert.equal(info.Id, loadedId, `${tag} in ${h.name}`);
    }

    // A service constrained to data center west runs on the worker, and only there.
    const service = 'pole-bench-swarm-test';
    const ts = performance.now();
    await m.createService({
      Name: service,
      TaskTemplate: {
        ContainerSpec: { Image: tag, Command: ['sleep', '300'] },
        Placement: { Constraints: [dcConstraint('west')] },
        RestartPolicy: { Condition: 'none' },
      },
      Mode: { Replicated: { Replicas: 1 } },
    });
    let task: { NodeID: string; Status: { State: string; Err?: string } } | undefined;
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(200)) {
      const tasks = (await m.listTasks({ filters: JSON.stringify({ service: [service] }) })) as NonNullable<
        typeof task
      >[];
      task = tasks[0];
      if (task && ['running', 'failed', 'rejected'].includes(task.Status.State)) break;
    }
    assert.equal(task?.Status.State, 'running', JSON.stringify(task?.Status));
    assert.equal(task.NodeID, worker.nodeId);
    const onWorker = await engineAt(worker.dockerHost).listContainers({
      filters: JSON.stringify({ label: [`com.docker.swarm.service.name=${service}`] }),
    });
    assert.equal(onWorker.length, 1);
    t.diagnostic(
      `constrained service running on ${worker.name} in ${((performance.now() - ts) / 1000).toFixed(1)} s`,
    );
    await m.getService(service).remove();

    // Up again with no shape asked: the same swarm, nothing loaded again.
    const again = await runCli(['swarm', 'up', '--images', 'node', '--json'], env);
    assert.equal(again.code, 0, again.stderr);
    const r2 = JSON.parse(again.stdout) as SwarmUpResult;
    assert.equal(r2.status, 'already-up');
    assert.deepEqual(
      r2.state.hosts.map((h) => h.nodeId),
      r.state.hosts.map((h) => h.nodeId),
    );
    // Nothing loaded again, unless the node image was rebuilt meanwhile (the machine is shared):
    // then that build, in both hosts.
    const nowId = await imageId(tag);
    assert.equal(r2.state.images.find((i) => i.tag === tag)?.id, nowId);
    assert.ok(
      r2.loaded.every((l) => l.tags.length === (nowId === loadedId ? 0 : 1)),
      JSON.stringify(r2.loaded),
    );
    // Another shape asked for while this one is up: refused, exit 2, nothing touched.
    const other = await runCli(['swarm', 'up', '--nodes', '3'], env);
    assert.equal(other.code, 2, other.stderr);
    // (oclif wraps the message and marks each line with ›)
    assert.match(
      other.stderr.replace(/\s*›\s*/g, ' ').replace(/\s+/g, ' '),
      /already up, not the 3 hosts .* asked for: pole-bench swarm down first, or swarm up --replace/,
    );

    const t1 = performance.now();
    const gone = await runCli(['swarm', 'down', '--json'], env);
    assert.equal(gone.code, 0, gone.stderr);
    const d = JSON.parse(gone.stdout) as SwarmDownResult;
    t.diagnostic(
      `swarm down: ${((performance.now() - t1) / 1000).toFixed(1)} s (${(d.ms / 1000).toFixed(1)} s inside)`,
    );
    assert.deepEqual([...d.removed.hosts].sort(), ['pole-bench-swarm-1', 'pole-bench-swarm-2']);
    assert.deepEqual(d.removed.networks, ['pole-bench-swarm']);
    assert.equal(existsSync(stateDir), false);
    // Nothing with the swarm's labels is left on the machine's Docker.
    const docker = new Docker();
    const filters = JSON.stringify({ label: ['pole-bench.run=swarm'] });
    assert.deepEqual(await docker.listContainers({ all: true, filters }), []);
    assert.deepEqual(await docker.listNetworks({ filters }), []);
    assert.deepEqual((await docker.listVolumes({ filters })).Volumes ?? [], []);
    // And down again has nothing to do.
    const twice = await runCli(['swarm', 'down', '--json'], env);
    assert.equal(twice.code, 0, twice.stderr);
    assert.equal((JSON.parse(twice.stdout) as SwarmDownResult).nothing, true);
    down = true;
  } finally {
    // Whatever failed above, nothing of the swarm stays.
    if (!down) await runCli(['swarm', 'down'], env);
    rmSync(join(stateDir, '..'), { recursive: true, force: true });
  }
});
