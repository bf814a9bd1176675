// The Docker build context: exactly the files the image needs, listed first (a plan), hashed from
// the plan without copying anything (so an up-to-date image is recognised in about a second), and
// only then staged into a temporary directory for `docker build`.
//
// Layout of the context (and of /opt/pole-bench in the image):
//   Dockerfile, node (the Node binary), package.json, oclif.manifest.json, bin/, dist/src/ (no
//   source maps), node_modules/ (production packages only), topologies/
import { createHash } from 'node:crypto';
import {
  chmodSync,
  constants,
  copyFileSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { productionPackageDirs } from './production-modules.js';

export interface ContextEntry {
  /** Path inside the context, with forward slashes. */
  readonly to: string;
  /** Absolute source path on the host. */
  readonly from: string;
  readonly kind: 'file' | 'symlink';
  /** Permission bits (files only). */
  readonly mode: number;
}

export interface ContextSources {
  /** The project root (package.json, package-lock.json, bin/, node_modules/, topologies/). */
  readonly root: string;
  /** The compiled `src` directory to ship as dist/src. */
  readonly compiledSrc: string;
  /** The Dockerfile to ship as the context's Dockerfile. */
  readonly dockerfile: string;
  /** The Node binary to ship as `node`. */
  readonly nodeBinary: string;
}

/** Every file of the context, sorted by its path in the context. */
export function planContext(src: ContextSources): ContextEntry[] {
  const entries: ContextEntry[] = [];
  const add = (from: string, to: string): void => {
    const st = lstatSync(from);
    if (st.isSymbolicLink()) entries.push({ to, from, kind: 'symlink', mode: 0o777 });
    else if (st.isFile()) entries.push({ to, from, kind: 'file', mode: st.mode & 0o777 });
  };
  add(src.dockerfile, 'Dockerfile');
  // The binary itself, not a symlink to it (/usr/bin/node is often one).
  entries.push({ to: 'node', from: src.nodeBinary, kind: 'file', mode: 0o755 });
  add(join(src.root, 'package.json'), 'package.json');
  // Without it every process in a container imports every command on start (1.1 s of CPU here).
  const manifest = join(src.root, 'oclif.manifest.json');
  if (!existsSync(manifest))
    throw new Error(`${manifest} is missing: run npm run build (it writes it after compiling)`);
  add(manifest, 'oclif.manifest.json');
  walk(join(src.root, 'bin'), 'bin', add);
  walk(src.compiledSrc, 'dist/src', add, (name) => name.endsWith('.map') || name.endsWith('.tsbuildinfo'));
  const topologies = join(src.root, 'topologies');
  if (existsSync(topologies)) walk(topologies, 'topologies', add);
  for (const dir of productionPackageDirs(src.root)) {
    // Nested packages have their own lock entries (and may be dev-only): skip the inner node_modules.
    walk(join(src.root, dir), dir, add, (name, depth) => depth === 0 && name === 'node_modules');
  }
  return entries.sort((a, b) => (a.to < b.to ? -1 : a.to > b.to ? 1 : 0));
}

function walk(
  dir: string,
  to: string,
  add: (from: string, to: string) => void,
  skip: (name: string, depth: number) => boolean = () => false,
  depth = 0,
): void {
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    if (skip(d.name, depth)) continue;
    const from = join(dir, d.name);
    const target = `${to}/${d.name}`;
    if (d.isDirectory()) walk(from, target, add, skip, depth + 1);
    else add(from, target);
  }
}

/**
 * sha256 over the plan (paths, kinds, modes, contents) and any extra inputs (the base image's
 * id): equal hashes mean `docker build` would make the same image.
 */
export function hashContext(entries: readonly ContextEntry[], extra: readonly string[] = []): string {
  const h = createHash('sha256');
  for (const x of extra) h.update(`extra\0${x}\0`);
  for (const e of entries) {
    h.update(`${e.kind}\0${e.to}\0${e.mode.toString(8)}\0`);
    if (e.kind === 'symlink') h.update(readlinkSync(e.from));
    else h.update(createHash('sha256').update(readFileSync(e.from)).digest());
    h.update('\0');
  }
  return h.digest('hex');
}

/** Copies the plan into dir (which must exist and be empty). */
export function stageContext(entries: readonly ContextEntry[], dir: string): void {
  const made = new Set<string>();
  for (const e of entries) {
    const dest = join(dir, ...e.to.split('/'));
    const parent = dirname(dest);
    if (!made.has(parent)) {
      mkdirSync(parent, { recursive: true });
      made.add(parent);
    }
    if (e.kind === 'symlink') {
      symlinkSync(readlinkSync(e.from), dest);
    } else if (!linked(e, dest)) {
      // A reflink where the file system offers one; a plain copy otherwise.
      copyFileSync(e.from, dest, constants.COPYFILE_FICLONE);
      chmodSync(dest, e.mode);
    }
  }
}

/**
 * A hard link instead of a copy: staging 120 MB (Node, node_modules) then takes milliseconds
 * instead of seconds. Only when the source already has the planned mode (a link shares it, and
 * the source must not be chmod-ed); not across file systems, nor where protected_hardlinks
 * forbids it (then the caller copies). Nothing writes to the staged files.
 */
function linked(e: ContextEntry, dest: string): boolean {
  if ((lstatSync(e.from).mode & 0o777) !== e.mode) return false;
  try {
    linkSync(e.from, dest);
    return true;
  } catch {
    return false;
  }
}

/** Total bytes of the plan's files (for the progress line). */
export function contextBytes(entries: readonly ContextEntry[]): number {
  let total = 0;
  for (const e of entries) if (e.kind === 'file') total += lstatSync(e.from).size;
  return total;
}
