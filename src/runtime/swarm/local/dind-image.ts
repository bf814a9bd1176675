// The DinD host image of `pole-bench swarm up`: dind-image/ (Debian 12's docker.io and a small
// entrypoint that starts dockerd) FROM the offline Debian base, tagged pole-bench-dind:<version>,
// built once per base and recipe like the ZooKeeper image. Nothing of pole-bench's code is in it.
import { join } from 'node:path';
import { ensureBaseImage, BaseImageError } from '../../../image/base-image.js';
import { CommandError } from '../../../image/docker-cli.js';
import { daemonAnswers } from '../../../image/docker-probe.js';
import { ensureDockerfileImage, type DockerfileImage } from '../../../image/dockerfile-image.js';
import { packageInfo } from '../../../image/image-name.js';
import { ImageBuildError } from '../../../image/image-build.js';

export const DIND_IMAGE_REPOSITORY = 'pole-bench-dind';

export function dindImageTag(version: string): string {
  return `${DIND_IMAGE_REPOSITORY}:${version}`;
}

/**
 * The DinD host image, built (offline: the project's Debian base, never a registry) when it is
 * missing or its recipe or base changed. Errors are ImageBuildErrors: 3 when the daemon or the
 * build failed, 2 when the base cannot be made here (e.g. debootstrap needs root).
 */
export async function ensureDindImage(
  progress: (line: string) => void,
  signal?: AbortSignal,
): Promise<DockerfileImage> {
  const daemon = await daemonAnswers();
  if (!daemon.ok) {
    throw new ImageBuildError(
      `no Docker daemon answers (${daemon.detail}): start one (scripts/ci-docker.sh start does)`,
      3,
    );
  }
  const pkg = packageInfo();
  try {
    const base = await ensureBaseImage({ root: pkg.root, offline: true, progress });
    return await ensureDockerfileImage({
      tag: dindImageTag(pkg.version),
      folder: join(pkg.root, 'src', 'runtime', 'swarm', 'local', 'dind-image'),
      base,
      what: "Debian's docker.io; once per base",
      progress,
      ...(signal ? { signal } : {}),
    });
  } catch (err) {
    if (err instanceof BaseImageError) throw new ImageBuildError(err.message, 2);
    if (err instanceof CommandError) throw new ImageBuildError(err.message, 3, err.tail);
    throw err;
  }
}
