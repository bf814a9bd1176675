// The image the node image is built FROM: by default the offline Debian base that
// docker/base/build-base.sh makes with debootstrap (built once, then reused by its tag); or the
// image the user names, pulled only when it is not there and pulling is allowed.
import { join } from 'node:path';
import { docker, dockerMaybe, runStreaming } from './docker-cli.js';

export class BaseImageError extends Error {
  override readonly name = 'BaseImageError';
}

export interface BaseImage {
  /** What the Dockerfile's FROM names. */
  readonly ref: string;
  /** The local image id (sha256:…), part of the content hash: a rebuilt base means a new image. */
  readonly id: string;
  /** How we got it. */
  readonly origin: 'reused' | 'built-offline' | 'pulled' | 'local';
}

export interface BaseImageOptions {
  /** The project root (docker/base/build-base.sh lives under it). */
  readonly root: string;
  /** A base image of the user's instead of the offline one. */
  readonly baseImage?: string;
  /** Never contact a registry: a --base-image that is not local is an error. */
  readonly offline: boolean;
  readonly progress: (line: string) => void;
}

export async function ensureBaseImage(opts: BaseImageOptions): Promise<BaseImage> {
  if (opts.baseImage !== undefined) return userBase(opts.baseImage, opts);
  const script = join(opts.root, 'docker', 'base', 'build-base.sh');
  const [tag] = await runStreaming('bash', [script, '--tag'], () => undefined);
  if (!tag) throw new BaseImageError(`${script} --tag printed no tag`);
  const existing = await imageId(tag);
  if (existing) return { ref: tag, id: existing, origin: 'reused' };
  opts.progress(`building the offline base ${tag} (debootstrap from Debian's packages; once per machine)`);
  const lines = await runStreaming('bash', [script], (line) => {
    if (line.startsWith('base: ')) opts.progress(`  ${line.slice('base: '.length)}`);
  });
  const built = lines.at(-1);
  if (built !== tag) throw new BaseImageError(`${script} built ${String(built)}, expected ${tag}`);
  const id = await imageId(tag);
  if (!id) throw new BaseImageError(`${script} finished but ${tag} is not in the image store`);
  return { ref: tag, id, origin: 'built-offline' };
}

async function userBase(ref: string, opts: BaseImageOptions): Promise<BaseImage> {
  const local = await imageId(ref);
  if (local) return { ref, id: local, origin: 'local' };
  if (opts.offline) {
    throw new BaseImageError(
      `--base-image ${ref} is not in the local image store and --offline forbids pulling it ` +
        `(docker load it first, or drop --base-image to build the offline Debian base)`,
    );
  }
  opts.progress(`pulling ${ref} (--base-image names an image that is not here yet)`);
  await docker(['pull', ref]);
  const id = await imageId(ref);
  if (!id) throw new BaseImageError(`pulled ${ref} but it is not in the image store`);
  return { ref, id, origin: 'pulled' };
}

/** The local image id of REF, or undefined when there is none. */
export async function imageId(ref: string): Promise<string | undefined> {
  const id = await dockerMaybe(['image', 'inspect', '--format', '{{.Id}}', ref]);
  return id && id.length > 0 ? id : undefined;
}

/** The image REF names and its pole-bench.content-hash label, or undefined when there is none. */
export async function labelledImage(
  ref: string,
  label: string,
): Promise<{ id: string; hash: string } | undefined> {
  const out = await dockerMaybe([
    'image',
    'inspect',
    '--format',
    `{{.Id}} {{index .Config.Labels "${label}"}}`,
    ref,
  ]);
  const [id, hash] = (out ?? '').split(' ');
  return id ? { id, hash: hash ?? '' } : undefined;
}
