// Which Node goes into the image, and whether it can: by default the very binary running this
// harness (see docker/Dockerfile for why), resolved through symlinks, at least the major version
// package.json's engines asks for. Whether its shared libraries exist in the base is checked by
// the Dockerfile itself (ldd inside the base), where the answer is the base's, not the host's.
import { realpathSync, statSync } from 'node:fs';
import { execa } from 'execa';

export const MIN_NODE_MAJOR = 20;

export class NodeBinaryError extends Error {
  override readonly name = 'NodeBinaryError';
}

export interface NodeBinary {
  /** The real file (symlinks resolved). */
  readonly path: string;
  /** e.g. `v20.20.2`. */
  readonly version: string;
  readonly major: number;
}

export async function checkNodeBinary(path: string = process.execPath): Promise<NodeBinary> {
  let real: string;
  try {
    real = realpathSync(path);
    if (!statSync(real).isFile()) throw new Error('not a file');
  } catch {
    throw new NodeBinaryError(`node binary ${path}: no such file`);
  }
  const r = await execa(real, ['-p', 'process.version'], { reject: false, stdin: 'ignore', timeout: 10_000 });
  const version = r.stdout.trim();
  const match = /^v(\d+)\.\d+\.\d+/.exec(version);
  if (r.failed || !match?.[1]) {
    throw new NodeBinaryError(
      `node binary ${path}: does not run as Node (${(r.shortMessage ?? '').split('\n')[0]})`,
    );
  }
  const major = Number(match[1]);
  if (major < MIN_NODE_MAJOR) {
    throw new NodeBinaryError(
      `node binary ${path}: Node ${version} is older than ${MIN_NODE_MAJOR}, which pole-bench needs ` +
        `(give a Node ${MIN_NODE_MAJOR}+ linux binary, e.g. bin/node of an official linux-x64 tarball)`,
    );
  }
  return { path: real, version, major };
}
