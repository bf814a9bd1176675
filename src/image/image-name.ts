// Names shared by the image build, the Docker probe and the Docker runtime: the node image's
// repository and tag, its labels, and where the project's files are.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const IMAGE_REPOSITORY = 'pole-bench-node';

/**
 * Labels pole-bench puts on its node image. Containers inherit their image's labels, so none of
 * these may be one that `pole-bench clean` selects containers by (`pole-bench`, `pole-bench.run`).
 */
export const IMAGE_LABELS = {
  version: 'pole-bench.version',
  /** sha256 over everything staged into the build context plus the base image's id. */
  contentHash: 'pole-bench.content-hash',
  nodeVersion: 'pole-bench.node-version',
} as const;

/** The node image's tag for a package version: `pole-bench-node:0.1.0`. */
export function nodeImageTag(version: string): string {
  return `${IMAGE_REPOSITORY}:${version}`;
}

export interface PackageInfo {
  readonly root: string;
  readonly name: string;
  readonly version: string;
}

/**
 * The project's root: the nearest directory above this module with pole-bench's package.json.
 * Walking up (rather than a fixed `../../..`) finds it from dist/src/image and from any other
 * output directory alike.
 */
export function packageInfo(from: string = fileURLToPath(import.meta.url)): PackageInfo {
  let dir = dirname(from);
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'pole-bench' && typeof pkg.version === 'string') {
        return { root: dir, name: pkg.name, version: pkg.version };
      }
    }
    const up = dirname(dir);
    if (up === dir) throw new Error(`no pole-bench package.json above ${from}`);
    dir = up;
  }
}

/** The compiled `src` directory this module was loaded from (dist/src in a normal build). */
export function compiledSrcDir(): string {
  return fileURLToPath(new URL('..', import.meta.url));
}
