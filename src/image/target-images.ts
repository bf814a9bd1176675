// The images of the targets that are not the POLE node: each a folder of docker/ (its Dockerfile
// alone) FROM the offline Debian base, tagged pole-bench-<target>:<version> and labelled with a
// hash of the Dockerfile and the base's id, so that it is built once per base and reused after that
// (its one step installs Debian's packages; nothing of pole-bench's code is in it, so code changes
// never rebuild it).
import { join } from 'node:path';
import type { BaseImage } from './base-image.js';
import { ensureDockerfileImage, type DockerfileImage } from './dockerfile-image.js';
import type { ContainerImage, TargetName } from '../vocabulary/names.js';

/** An image a target's members run other than the node image. */
export type TargetImage = Exclude<ContainerImage, 'node'>;

const RECIPES: Record<TargetImage, { readonly repository: string; readonly what: string }> = {
  zookeeper: {
    repository: 'pole-bench-zookeeper',
    what: "Debian's zookeeper and JRE packages; once per base",
  },
  etcd: { repository: 'pole-bench-etcd', what: "Debian's etcd-server package; once per base" },
};

export const TARGET_IMAGES = Object.keys(RECIPES) as readonly TargetImage[];

export function targetImageTag(kind: TargetImage, version: string): string {
  return `${RECIPES[kind].repository}:${version}`;
}

export function zookeeperImageTag(version: string): string {
  return targetImageTag('zookeeper', version);
}

/** The image a target's members run besides the node image (holders and agents run that). */
export function ownImageOf(target: TargetName): TargetImage | undefined {
  return target === 'pole' ? undefined : target;
}

export async function ensureTargetImage(
  kind: TargetImage,
  o: {
    readonly root: string;
    readonly version: string;
    readonly base: BaseImage;
    readonly progress: (line: string) => void;
  },
): Promise<DockerfileImage> {
  // The context is docker/<kind>, which holds the Dockerfile alone: the image holds nothing of
  // the project.
  return ensureDockerfileImage({
    tag: targetImageTag(kind, o.version),
    folder: join(o.root, 'docker', kind),
    base: o.base,
    what: RECIPES[kind].what,
    progress: o.progress,
  });
}
