// The images of the targets whose members are not the POLE node: each a folder holding its
// Dockerfile alone (the target's own, in its folder: targets/<name>/image/) FROM the offline
// Debian base, tagged pole-bench-<target>:<version> and labelled with a hash of the Dockerfile and
// the base's id, so that it is built once per base and reused after that (its one step installs
// Debian's packages; nothing of pole-bench's code is in it, so code changes never rebuild it).
import type { BaseImage } from './base-image.js';
import { ensureDockerfileImage, type DockerfileImage } from './dockerfile-image.js';
import type { TargetName } from '../vocabulary/names.js';

/** A target's own image, as the target declares it (MemberKind.image). */
export interface OwnImageRecipe {
  /** The build context: a folder holding the Dockerfile alone (the image holds nothing of the project). */
  readonly folder: string;
  /** What it holds and how often it is built, for the progress line. */
  readonly what: string;
}

/** A target's image to build, under the target's name. */
export interface TargetImage {
  readonly target: TargetName;
  readonly recipe: OwnImageRecipe;
}

export function targetImageTag(target: TargetName, version: string): string {
  return `pole-bench-${target}:${version}`;
}

export async function ensureTargetImage(
  image: TargetImage,
  o: { readonly version: string; readonly base: BaseImage; readonly progress: (line: string) => void },
): Promise<DockerfileImage> {
  return ensureDockerfileImage({
    tag: targetImageTag(image.target, o.version),
    folder: image.recipe.folder,
    base: o.base,
    what: image.recipe.what,
    progress: o.progress,
  });
}
