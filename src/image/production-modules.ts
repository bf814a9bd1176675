// The production part of node_modules, as package-lock.json defines it: every installed package
// the lock does not mark `dev`. Taken from the checkout's own node_modules (which `npm ci` made
// from the same lock), so building the image needs no registry at all; every package's version is
// checked against the lock, and a checkout whose node_modules does not match is refused.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export class ModulesMismatchError extends Error {
  override readonly name = 'ModulesMismatchError';
}

interface LockEntry {
  readonly version?: string;
  readonly dev?: boolean;
  readonly optional?: boolean;
  readonly devOptional?: boolean;
  readonly link?: boolean;
}

interface Lockfile {
  readonly lockfileVersion?: number;
  readonly packages?: Record<string, LockEntry>;
}

/**
 * Directories (relative to root, e.g. `node_modules/chalk`, `node_modules/a/node_modules/b`) of
 * the production packages, sorted. Nested packages are listed on their own, so a caller copying a
 * package directory skips its inner node_modules.
 */
export function productionPackageDirs(root: string): string[] {
  const lockPath = join(root, 'package-lock.json');
  if (!existsSync(lockPath)) {
    throw new ModulesMismatchError(
      `${lockPath} is missing: the image installs exactly what the lock file says`,
    );
  }
  const lock = JSON.parse(readFileSync(lockPath, 'utf8')) as Lockfile;
  if (!lock.packages || (lock.lockfileVersion ?? 0) < 2) {
    throw new ModulesMismatchError(`${lockPath}: lockfileVersion 2 or 3 needed (npm 7 or newer writes it)`);
  }
  const dirs: string[] = [];
  for (const [key, entry] of Object.entries(lock.packages)) {
    // "" is the project itself; dev packages stay out of the image.
    if (key === '' || entry.dev === true) continue;
    if (entry.link === true) {
      throw new ModulesMismatchError(
        `${key} is a linked package (workspace or file:): not supported in the image`,
      );
    }
    const manifest = join(root, key, 'package.json');
    if (!existsSync(manifest)) {
      // Optional packages for other platforms are never installed; a missing required one is.
      if (entry.optional === true || entry.devOptional === true) continue;
      throw new ModulesMismatchError(`${key} is in package-lock.json but not installed: run npm ci`);
    }
    const installed = (JSON.parse(readFileSync(manifest, 'utf8')) as { version?: unknown }).version;
    if (entry.version !== undefined && installed !== entry.version) {
      throw new ModulesMismatchError(
        `${key} is ${String(installed)} in node_modules but ${entry.version} in package-lock.json: run npm ci`,
      );
    }
    dirs.push(key);
  }
  return dirs.sort();
}
