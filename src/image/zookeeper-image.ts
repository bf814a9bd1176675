// The ZooKeeper image for the docker runtime's zookeeper target: docker/zookeeper/Dockerfile FROM
// the offline Debian base, tagged pole-bench-zookeeper:<version> and labelled with a hash of the
// Dockerfile and the base's id, so that it is built once per base and reused after that (its one
// step installs Debian's packages, which takes a minute or two; nothing of pole-bench's code is in
// it, so code changes never rebuild it).
import { join } from 'node:path';
import type { BaseImage } from './base-image.js';
import { ensureDockerfileImage, type DockerfileImage } from './dockerfile-image.js';

export const ZK_IMAGE_REPOSITORY = 'pole-bench-zookeeper';

export function zookeeperImageTag(version: string): string {
  return `${ZK_IMAGE_REPOSITORY}:${version}`;
}

export type ZookeeperImage = DockerfileImage;

export async function ensureZookeeperImage(o: {
  readonly root: string;
  readonly version: string;
  readonly base: BaseImage;
  readonly progress: (line: string) => void;
}): Promise<ZookeeperImage> {
  // The context is docker/zookeeper, which holds the Dockerfile alone: the image holds nothing of
  // the project.
  return ensureDockerfileImage({
    tag: zookeeperImageTag(o.version),
    folder: join(o.root, 'docker', 'zookeeper'),
    base: o.base,
    what: "Debian's zookeeper and JRE packages; once per base",
    progress: o.progress,
  });
}
