// src/image/: the docker runtime's images (pole-bench-node, -zookeeper, -etcd) and the offline Debian
// base they are built FROM; the docker CLI calls, and the probe `--runtime auto` asks.
//
// `pole-bench image build`: the node image from the project's compiled code, its production
// dependencies, the Node binary and an offline Debian base, tagged pole-bench-node:<version>; and
// the zookeeper and etcd targets' images from the same base (target-images.ts).
//
// Fast when nothing changed: the context is planned and hashed without copying (about a second),
// and an image whose content-hash label matches is reused as it is; after a code change, Docker's
// layer cache serves everything but the compiled code's layer (see docker/Dockerfile's order).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { ensureBaseImage, imageId, labelledImage, type BaseImage, BaseImageError } from './base-image.js';
import { contextBytes, hashContext, planContext, stageContext } from './build-context.js';
import { BuildStepTracker, type BuildStep } from './build-steps.js';
import { CommandError, docker, dockerMaybe, runStreaming } from './docker-cli.js';
import { daemonAnswers } from './docker-probe.js';
import { compiledSrcDir, IMAGE_LABELS, nodeImageTag, packageInfo } from './image-name.js';
import { checkNodeBinary, type NodeBinary, NodeBinaryError } from './node-binary.js';
import { ModulesMismatchError } from './production-modules.js';
import { ensureTargetImage, type TargetImage } from './target-images.js';
import type { TargetName } from '../vocabulary/names.js';
import type { DockerfileImage } from './dockerfile-image.js';

export interface ImageBuildOptions {
  /** Build FROM this image instead of the offline Debian base (pulled only if absent and not offline). */
  readonly baseImage?: string;
  /** Never contact a container registry (the default base never does). */
  readonly offline?: boolean;
  /** Tag to give the image; default pole-bench-node:<package version>. */
  readonly tag?: string;
  /** The Node binary to put in the image; default the one running this process. */
  readonly nodeBinary?: string;
  /** One line per thing being done, as it happens. */
  readonly progress?: (line: string) => void;
  /** The targets' own images to build or find up to date too (targets/registry.ts targetImages). */
  readonly targetImages?: readonly TargetImage[];
}

export interface ImageBuildPhase {
  readonly name: string;
  readonly ms: number;
}

/** With each target's own image asked for, built or found up to date, under the target's name. */
export interface ImageBuildResult extends Partial<Record<TargetName, DockerfileImage>> {
  readonly tag: string;
  readonly imageId: string;
  readonly version: string;
  /** The pole-bench.content-hash label: sha256 of the build context and the base image id. */
  readonly contentHash: string;
  /** True when an image with this content hash existed and no build ran. */
  readonly upToDate: boolean;
  readonly base: BaseImage;
  readonly node: NodeBinary;
  readonly sizeBytes: number;
  /** The builder's steps (empty when upToDate). */
  readonly dockerSteps: readonly BuildStep[];
  /** An older image this tag pointed to, removed because nothing else named it. */
  readonly removedPrevious?: string;
  readonly phases: readonly ImageBuildPhase[];
  readonly totalMs: number;
}

export class ImageBuildError extends Error {
  override readonly name = 'ImageBuildError';
  constructor(
    message: string,
    /** 2: something the user gave or must fix first; 3: the build itself failed. */
    readonly exitCode: 2 | 3,
    readonly tail: readonly string[] = [],
  ) {
    super(message);
  }
}

export async function buildImage(opts: ImageBuildOptions = {}): Promise<ImageBuildResult> {
  const progress = opts.progress ?? (() => undefined);
  const started = performance.now();
  const phases: ImageBuildPhase[] = [];
  const timed = async <T>(name: string, fn: () => Promise<T> | T, done: (v: T) => string): Promise<T> => {
    const t0 = performance.now();
    const value = await fn();
    const ms = performance.now() - t0;
    phases.push({ name, ms });
    progress(`${done(value)} (${seconds(ms)})`);
    return value;
  };

  try {
    const pkg = packageInfo();
    const tag = opts.tag ?? nodeImageTag(pkg.version);

    const daemon = await daemonAnswers();
    if (!daemon.ok) {
      throw new ImageBuildError(
        `no Docker daemon answers (${daemon.detail}): start one (scripts/ci-docker.sh start does)`,
        3,
      );
    }
    const node = await timed(
      'node',
      () => checkNodeBinary(opts.nodeBinary),
      (n) => `node ${n.version} from ${n.path}`,
    );
    const base = await timed(
      'base',
      () =>
        ensureBaseImage({
          root: pkg.root,
          baseImage: opts.baseImage,
          offline: opts.offline ?? false,
          progress,
        }),
      (b) => `base ${b.ref} (${b.origin})`,
    );
    const { entries, hash } = await timed(
      'hash',
      () => {
        const entries = planContext({
          root: pkg.root,
          compiledSrc: compiledSrcDir(),
          dockerfile: join(pkg.root, 'docker', 'Dockerfile'),
          nodeBinary: node.path,
        });
        return { entries, hash: hashContext(entries, [`base=${base.id}`]) };
      },
      (c) =>
        `context: ${c.entries.length} files, ${megabytes(contextBytes(c.entries))}, hash ${c.hash.slice(0, 12)}`,
    );

    const existing = await timed(
      'lookup',
      () => findByHash(tag, hash),
      (id) =>
        id ? `${tag} is up to date (${id.slice(7, 19)})` : `no image with this content yet: building ${tag}`,
    );
    // The targets' own images, one after the other (each is one apt-get in the builder).
    const targetImages = async (): Promise<Partial<Record<TargetName, DockerfileImage>>> => {
      const made: Partial<Record<TargetName, DockerfileImage>> = {};
      for (const image of opts.targetImages ?? [])
        made[image.target] = await timed(
          `${image.target} image`,
          () => ensureTargetImage(image, { version: pkg.version, base, progress }),
          (z) => `${z.tag} ${z.upToDate ? 'up to date' : 'built'}`,
        );
      return made;
    };
    if (existing) {
      return {
        ...(await targetImages()),
        tag,
        imageId: existing,
        version: pkg.version,
        contentHash: hash,
        upToDate: true,
        base,
        node,
        sizeBytes: await imageSize(existing),
        dockerSteps: [],
        phases,
        totalMs: performance.now() - started,
      };
    }

    const previous = await imageId(tag);
    const dir = mkdtempSync(join(tmpdir(), 'pole-bench-image-'));
    try {
      await timed(
        'stage',
        () => stageContext(entries, dir),
        () => `staged the context in ${dir}`,
      );
      const steps = await timed(
        'docker build',
        () => dockerBuild(dir, tag, base, node, pkg.version, hash, pkg.root, progress),
        (s) => `docker build: ${s.length} steps, ${s.filter((x) => x.cached).length} from cache`,
      );
      const id = await imageId(tag);
      if (!id) throw new ImageBuildError(`docker build finished but ${tag} is not in the image store`, 3);
      const removedPrevious =
        previous && previous !== id ? await removeIfUnnamed(previous, progress) : undefined;
      return {
        ...(await targetImages()),
        tag,
        imageId: id,
        version: pkg.version,
        contentHash: hash,
        upToDate: false,
        base,
        node,
        sizeBytes: await imageSize(id),
        dockerSteps: steps,
        ...(removedPrevious ? { removedPrevious } : {}),
        phases,
        totalMs: performance.now() - started,
      };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  } catch (err) {
    throw asBuildError(err);
  }
}

/** The image carrying this content hash: TAG itself, or another image (then tagged TAG). */
async function findByHash(tag: string, hash: string): Promise<string | undefined> {
  const current = await labelledImage(tag, IMAGE_LABELS.contentHash);
  if (current && current.hash === hash) return current.id;
  const other = (
    await docker([
      'image',
      'ls',
      '--quiet',
      '--no-trunc',
      '--filter',
      `label=${IMAGE_LABELS.contentHash}=${hash}`,
    ])
  )
    .split('\n')
    .find((l) => l.length > 0);
  if (!other) return undefined;
  await docker(['image', 'tag', other, tag]);
  return other;
}

async function dockerBuild(
  dir: string,
  tag: string,
  base: BaseImage,
  node: NodeBinary,
  version: string,
  hash: string,
  root: string,
  progress: (line: string) => void,
): Promise<BuildStep[]> {
  const tracker = new BuildStepTracker((s) =>
    progress(
      `  step ${s.index}/${s.total} ${s.instruction}${s.cached ? ' [cached]' : ''} (${seconds(s.ms)})`,
    ),
  );
  const args = [
    'build',
    '--tag',
    tag,
    // Intermediate containers go even when a step fails: a failed build leaves nothing running.
    '--force-rm',
    '--build-arg',
    `BASE_IMAGE=${base.ref}`,
    '--build-arg',
    `POLE_VERSION=${version}`,
    '--build-arg',
    `CONTENT_HASH=${hash}`,
    '--build-arg',
    `NODE_VERSION=${node.version}`,
    '--build-arg',
    `CREATED=${new Date().toISOString()}`,
    '--build-arg',
    `REVISION=${await gitRevision(root)}`,
    dir,
  ];
  try {
    // The classic builder: it is in every daemon (BuildKit needs the buildx plugin, which Debian's
    // docker.io lacks), uses a local FROM image without asking any registry, and caches COPY by
    // file content. The Dockerfile needs nothing BuildKit adds.
    await runStreaming(
      'docker',
      args,
      (line) => {
        if (tracker.line(line) || line.startsWith('DEPRECATED:') || line.includes('BuildKit')) return;
        if (line.startsWith('Sending build context')) progress(`  ${line.trim()}`);
      },
      { env: { DOCKER_BUILDKIT: '0' } },
    );
  } finally {
    tracker.finish();
  }
  return tracker.steps;
}

/** Removes an image this tag used to name when nothing else names it (a dangling old build). */
async function removeIfUnnamed(id: string, progress: (line: string) => void): Promise<string | undefined> {
  const info = await dockerMaybe([
    'image',
    'inspect',
    '--format',
    `{{len .RepoTags}} {{index .Config.Labels "${IMAGE_LABELS.contentHash}"}}`,
    id,
  ]);
  const [tags, hash] = (info ?? '').split(' ');
  if (tags !== '0' || !hash) return undefined;
  // In use by a container (a run in progress): docker refuses, and the image stays.
  if ((await dockerMaybe(['image', 'rm', id])) === undefined) return undefined;
  progress(`removed the previous build ${id.slice(7, 19)} (no tag named it any more)`);
  return id;
}

async function imageSize(id: string): Promise<number> {
  return Number(await docker(['image', 'inspect', '--format', '{{.Size}}', id]));
}

async function gitRevision(root: string): Promise<string> {
  const r = await execa('git', ['rev-parse', 'HEAD'], { cwd: root, reject: false, stdin: 'ignore' });
  if (r.failed) return 'unknown';
  const dirty = await execa('git', ['status', '--porcelain', '--untracked-files=no'], {
    cwd: root,
    reject: false,
    stdin: 'ignore',
  });
  return `${r.stdout.trim()}${!dirty.failed && dirty.stdout.trim().length > 0 ? '-dirty' : ''}`;
}

function asBuildError(err: unknown): unknown {
  if (err instanceof ImageBuildError) return err;
  if (err instanceof NodeBinaryError || err instanceof ModulesMismatchError)
    return new ImageBuildError(err.message, 2);
  if (err instanceof BaseImageError) return new ImageBuildError(err.message, 2);
  if (err instanceof CommandError) return new ImageBuildError(err.message, 3, err.tail);
  return err;
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}

export function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}
