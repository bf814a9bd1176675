// An image built from one folder of docker/ (its Dockerfile and the few files it COPYs) FROM the
// offline Debian base, with none of pole-bench's code in it: the ZooKeeper image and the DinD host
// image. Labelled with a hash of the folder's files and the base's id, so it is built once per base
// and recipe and found up to date after that (their one slow step installs Debian's packages).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { BaseImage } from './base-image.js';
import { imageId, labelledImage } from './base-image.js';
import { BuildStepTracker, type BuildStep } from './build-steps.js';
import { docker, dockerMaybe, runStreaming } from './docker-cli.js';
import { IMAGE_LABELS } from './image-name.js';

export interface DockerfileImage {
  readonly tag: string;
  readonly imageId: string;
  readonly contentHash: string;
  readonly upToDate: boolean;
  readonly sizeBytes: number;
  readonly dockerSteps: readonly BuildStep[];
}

export interface DockerfileImageSpec {
  readonly tag: string;
  /** The folder that is the build context: its Dockerfile and the files that Dockerfile COPYs. */
  readonly folder: string;
  readonly base: BaseImage;
  /** Said when a build starts: what the image holds, for the progress line. */
  readonly what: string;
  readonly progress: (line: string) => void;
  /** Ends the build when aborted (the builder drops a build whose client went). */
  readonly signal?: AbortSignal;
}

/**
 * sha256 over the folder's Dockerfile, then every other file (name, mode, bytes) in name order,
 * then the base's id. For a folder holding a Dockerfile alone it is sha256(Dockerfile, base=<id>),
 * the hash the ZooKeeper image has always carried, so its images stay up to date.
 */
export function folderHash(folder: string, baseId: string): string {
  const h = createHash('sha256').update(readFileSync(join(folder, 'Dockerfile')));
  for (const name of readdirSync(folder).sort()) {
    if (name === 'Dockerfile') continue;
    const st = statSync(join(folder, name));
    if (!st.isFile()) continue;
    h.update(`\0file\0${name}\0${(st.mode & 0o777).toString(8)}\0`);
    h.update(readFileSync(join(folder, name)));
  }
  return h.update(`base=${baseId}`).digest('hex');
}

export async function ensureDockerfileImage(spec: DockerfileImageSpec): Promise<DockerfileImage> {
  const { tag, progress } = spec;
  const hash = folderHash(spec.folder, spec.base.id);
  const current = await labelledImage(tag, IMAGE_LABELS.contentHash);
  const existing = current?.id;
  if (existing && current.hash === hash) {
    progress(`${tag} is up to date (${existing.slice(7, 19)})`);
    return {
      tag,
      imageId: existing,
      contentHash: hash,
      upToDate: true,
      sizeBytes: await size(existing),
      dockerSteps: [],
    };
  }
  progress(`building ${tag} (${spec.what})`);
  const tracker = new BuildStepTracker((s) =>
    progress(`  step ${s.index}/${s.total} ${s.instruction}${s.cached ? ' [cached]' : ''}`),
  );
  try {
    // The classic builder, as for the node image (image-build.ts says why).
    await runStreaming(
      'docker',
      [
        'build',
        '--tag',
        tag,
        '--force-rm',
        '--build-arg',
        `BASE_IMAGE=${spec.base.ref}`,
        '--build-arg',
        `CONTENT_HASH=${hash}`,
        spec.folder,
      ],
      (line) => void tracker.line(line),
      { env: { DOCKER_BUILDKIT: '0' }, ...(spec.signal ? { cancelSignal: spec.signal } : {}) },
    );
  } finally {
    tracker.finish();
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
