// The ZooKeeper image for the docker runtime's zookeeper target: docker/zookeeper/Dockerfile FROM
// the offline Debian base, tagged pole-bench-zookeeper:<version> and labelled with a hash of the
// Dockerfile and the base's id, so that it is built once per base and reused after that (its one
// step installs Debian's packages, which takes a minute or two; nothing of pole-bench's code is in
// it, so code changes never rebuild it).
import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BaseImage } from './base-image.js';
import { imageId, labelledImage } from './base-image.js';
import { BuildStepTracker, type BuildStep } from './build-steps.js';
import { docker, dockerMaybe, runStreaming } from './docker-cli.js';
import { IMAGE_LABELS } from './image-name.js';

export const ZK_IMAGE_REPOSITORY = 'pole-bench-zookeeper';

export function zookeeperImageTag(version: string): string {
  return `${ZK_IMAGE_REPOSITORY}:${version}`;
}

export interface ZookeeperImage {
  readonly tag: string;
  readonly imageId: string;
  readonly contentHash: string;
  readonly upToDate: boolean;
  readonly sizeBytes: number;
  readonly dockerSteps: readonly BuildStep[];
}

export async function ensureZookeeperImage(o: {
  readonly root: string;
  readonly version: string;
  readonly base: BaseImage;
  readonly progress: (line: string) => void;
}): Promise<ZookeeperImage> {
  const tag = zookeeperImageTag(o.version);
  const dockerfile = join(o.root, 'docker', 'zookeeper', 'Dockerfile');
  const hash = createHash('sha256')
    .update(readFileSync(dockerfile))
    .update(`base=${o.base.id}`)
    .digest('hex');
  const current = await labelledImage(tag, IMAGE_LABELS.contentHash);
  const existing = current?.id;
  if (existing && current.hash === hash) {
    o.progress(`${tag} is up to date (${existing.slice(7, 19)})`);
    return {
      tag,
      imageId: existing,
      contentHash: hash,
      upToDate: true,
      sizeBytes: await size(existing),
      dockerSteps: [],
    };
  }
  o.progress(`building ${tag} (Debian's zookeeper and JRE packages; once per base)`);
  // The context is the Dockerfile alone: the image holds nothing of the project.
  const dir = mkdtempSync(join(tmpdir(), 'pole-bench-zk-image-'));
  const tracker = new BuildStepTracker((s) =>
    o.progress(`  step ${s.index}/${s.total} ${s.instruction}${s.cached ? ' [cached]' : ''}`),
  );
  try {
    copyFileSync(dockerfile, join(dir, 'Dockerfile'));
    await runStreaming(
      'docker',
      [
        'build',
        '--tag',
        tag,
        '--force-rm',
        '--build-arg',
        `BASE_IMAGE=${o.base.ref}`,
        '--build-arg',
        `CONTENT_HASH=${hash}`,
        dir,
      ],
      (line) => void tracker.line(line),
      { env: { DOCKER_BUILDKIT: '0' } },
    );
  } finally {
    tracker.finish();
    rmSync(dir, { recursive: true, force: true });
  }
  const id = await imageId(tag);
  if (!id) throw new Error(`docker build finished but ${tag} is not in the image store`);
  // An older build this tag named, now named by nothing: it goes (docker refuses if a container uses it).
  if (existing && existing !== id) await dockerMaybe(['image', 'rm', existing]);
  return {
    tag,
    imageId: id,
    contentHash: hash,
    upToDate: false,
    sizeBytes: await size(id),
    dockerSteps: tracker.steps,
  };
}

async function size(id: string): Promise<number> {
  return Number(await docker(['image', 'inspect', '--format', '{{.Size}}', id]));
}
