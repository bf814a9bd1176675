// The node image, built for real: `image build` with the offline base, a second build with nothing
// changed found up to date quickly, and the image itself: `pole-bench --version`, tc with its
// distribution tables, Node 20. Skips (saying why) where no Docker daemon answers; `.ci/run`
// starts one so that these run there. Where the image is already built (CI builds it first) the
// whole file takes a few seconds; from nothing, the build takes about a minute.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execa } from 'execa';
import { daemonAnswers, dockerStatus } from '../../src/image/docker-probe.js';
import { buildImage, type ImageBuildResult } from '../../src/image/image-build.js';
import { IMAGE_LABELS, nodeImageTag, packageInfo } from '../../src/image/image-name.js';
import { targetImageTag } from '../../src/image/target-images.js';
import { targetImages } from '../../src/targets/registry.js';

const daemon = await daemonAnswers();
const skip = daemon.ok ? false : `no Docker daemon: ${daemon.detail}`;
const version = packageInfo().version;
const TAG = nodeImageTag(version);

let built: ImageBuildResult | undefined;

/** `docker run --rm` with a given entrypoint; never throws, so stderr can be asserted on. */
async function runIn(entrypoint: string, args: readonly string[], extra: readonly string[] = []) {
  const r = await execa('docker', ['run', '--rm', ...extra, '--entrypoint', entrypoint, TAG, ...args], {
    reject: false,
    stdin: 'ignore',
    timeout: 30_000,
  });
  return { code: r.exitCode, stdout: r.stdout.trim(), stderr: r.stderr.trim() };
}

test(
  'image build makes the tagged image from the offline base; an unchanged rebuild is up to date in < 10 s',
  { skip, timeout: 240_000 },
  async () => {
    const first = await buildImage({ targetImages: targetImages() });
    assert.equal(first.tag, TAG);
    assert.match(first.base.ref, /^pole-bench-base:bookworm-[0-9a-f]{12}$/);
    assert.match(first.imageId, /^sha256:[0-9a-f]{64}$/);

    const t0 = performance.now();
    const again = await buildImage({ targetImages: targetImages() });
    const ms = performance.now() - t0;
    assert.equal(again.upToDate, true, 'nothing changed, so nothing should be built');
    assert.equal(again.imageId, first.imageId);
    assert.equal(again.contentHash, first.contentHash);
    assert.deepEqual(again.dockerSteps, []);
    assert.ok(ms < 10_000, `unchanged rebuild took ${Math.round(ms)} ms`);

    const labels = JSON.parse(
      (await execa('docker', ['image', 'inspect', '--format', '{{json .Config.Labels}}', TAG])).stdout,
    ) as Record<string, string>;
    assert.equal(labels[IMAGE_LABELS.version], version);
    assert.equal(labels['org.opencontainers.image.version'], version);
    assert.equal(labels[IMAGE_LABELS.contentHash], first.contentHash);
    assert.equal(labels['org.opencontainers.image.base.name'], first.base.ref);
    // Containers inherit image labels: the image must not carry the label `pole-bench clean` sweeps by.
    assert.equal(labels['pole-bench'], undefined);
    built = again;
  },
);

test('dockerStatus sees the daemon and the image', { skip }, async () => {
  const status = await dockerStatus();
  assert.equal(status.daemon, true);
  assert.equal(status.image, TAG, status.reason);
});

test('the image runs pole-bench --version', { skip }, async () => {
  const r = await runIn('node', ['/opt/pole-bench/bin/run.js', '--version']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`^pole-bench/${version.replaceAll('.', '\\.')} linux-x64 node-v20\\.`));
  // And through the image's own entrypoint.
  const viaEntrypoint = await execa('docker', ['run', '--rm', TAG, '--version'], {
    reject: false,
    timeout: 30_000,
  });
  assert.equal(viaEntrypoint.stdout.trim(), r.stdout);
});

test("the image's node is v20, the binary the build was given", { skip }, async () => {
  const r = await runIn('node', ['-p', 'process.version']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^v20\.\d+\.\d+$/);
  if (built) assert.equal(r.stdout, built.node.version);
});

test('tc is there with its distribution tables, and netem reads them', { skip }, async () => {
  const ls = await runIn('sh', ['-c', 'ls /usr/lib/tc/ && tc -V']);
  assert.equal(ls.code, 0, ls.stderr);
  for (const table of ['normal.dist', 'pareto.dist', 'paretonormal.dist'])
    assert.ok(ls.stdout.includes(table), ls.stdout);
  assert.match(ls.stdout, /tc utility, iproute2/);

  // tc loads a distribution table in user space before asking the kernel for netem: a missing table
  // fails with "No distribution data", a kernel without netem (this workplace's) with "qdisc kind is
  // unknown" after the table was read. Own network namespace (--network none): only its lo changes.
  const netem = await runIn(
    'tc',
    ['qdisc', 'add', 'dev', 'lo', 'root', 'netem', 'delay', '10ms', '1ms', 'distribution', 'pareto'],
    ['--network', 'none', '--cap-add', 'NET_ADMIN'],
  );
  assert.doesNotMatch(netem.stderr, /No distribution data/);
  assert.ok(
    netem.code === 0 || /qdisc kind is unknown/.test(netem.stderr),
    `tc: ${netem.code} ${netem.stderr}`,
  );

  // The check above can fail: without the table, the same command says so.
  const without = await runIn(
    'sh',
    ['-c', 'rm /usr/lib/tc/pareto.dist && tc qdisc add dev lo root netem delay 10ms 1ms distribution pareto'],
    ['--network', 'none', '--cap-add', 'NET_ADMIN'],
  );
  assert.match(without.stderr, /No distribution data for pareto/);
});

test(
  'the ZooKeeper image: built from the same base, up to date on a rebuild, runs ZooKeeper 3.8 with its log binding',
  { skip, timeout: 600_000 },
  async () => {
    const r = built ?? (await buildImage({ targetImages: targetImages() }));
    const zk = r.zookeeper;
    assert.ok(zk, 'image build makes the ZooKeeper image too');
    assert.equal(zk.tag, targetImageTag('zookeeper', version));
    const again = await buildImage({ targetImages: targetImages() });
    assert.equal(again.zookeeper?.upToDate, true);
    assert.equal(again.zookeeper?.imageId, zk.imageId);
    const jars =
      '/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-log4j12.jar:/usr/share/java/log4j-1.2.jar';
    const v = await execa(
      'docker',
      [
        'run',
        '--rm',
        '--entrypoint',
        'java',
        zk.tag,
        '-cp',
        jars,
        'org.apache.zookeeper.version.VersionInfoMain',
      ],
      { reject: false, stdin: 'ignore', timeout: 60_000 },
    );
    assert.equal(v.exitCode, 0, v.stderr);
    assert.match(v.stdout, /^Apache ZooKeeper, version 3\.8\./);
    // No SLF4J "defaulting to no-operation" warning: the binding is on the class path.
    assert.doesNotMatch(v.stderr, /NOP/);
  },
);

test(
  'the etcd image: built from the same base, up to date on a rebuild, runs etcd 3.4',
  { skip, timeout: 600_000 },
  async () => {
    const r = built ?? (await buildImage({ targetImages: targetImages() }));
    const etcd = r.etcd;
    assert.ok(etcd, 'image build makes the etcd image too');
    assert.equal(etcd.tag, targetImageTag('etcd', version));
    const again = await buildImage({ targetImages: targetImages() });
    assert.equal(again.etcd?.upToDate, true);
    assert.equal(again.etcd?.imageId, etcd.imageId);
    const v = await execa('docker', ['run', '--rm', '--entrypoint', 'etcd', etcd.tag, '--version'], {
      reject: false,
      stdin: 'ignore',
      timeout: 60_000,
    });
    assert.equal(v.exitCode, 0, v.stderr);
    assert.match(v.stdout, /^etcd Version: 3\.4\./m);
  },
);
