// Moving pole-bench's images into the hosts' engines without a registry: one `docker save` from
// the machine's Docker, its tar stream handed at once to a `docker load` into every host that
// lacks an image or holds an older build of it (the same image id means the same image: load
// keeps the id). A host's older build, now named by nothing, is removed (its tmpfs is memory).
import { execa } from 'execa';
import { imageId } from '../../../image/base-image.js';
import { nodeImageTag } from '../../../image/image-name.js';
import { targetImageTag } from '../../../image/target-images.js';
import { engineAt } from './dind-host.js';
import { SwarmError, SwarmInterrupted } from './swarm-error.js';
import type { SwarmImageKind } from './swarm-plan.js';

export interface LocalImage {
  readonly kind: SwarmImageKind;
  readonly tag: string;
  readonly id: string;
}

export interface SkippedImage {
  readonly kind: SwarmImageKind;
  readonly tag: string;
  readonly reason: string;
}

export function swarmImageTag(kind: SwarmImageKind, version: string): string {
  return kind === 'node' ? nodeImageTag(version) : targetImageTag(kind, version);
}

/** Which of the asked-for images the machine's Docker has; the others are skipped, saying why. */
export async function localImages(
  kinds: readonly SwarmImageKind[],
  version: string,
): Promise<{ present: LocalImage[]; skipped: SkippedImage[] }> {
  const present: LocalImage[] = [];
  const skipped: SkippedImage[] = [];
  for (const kind of kinds) {
    const tag = swarmImageTag(kind, version);
    const id = await imageId(tag);
    if (id) present.push({ kind, tag, id });
    else
      skipped.push({
        kind,
        tag,
        reason: `${tag} is not built on this machine (pole-bench image build makes it; then swarm up again)`,
      });
  }
  return { present, skipped };
}

export interface HostEngine {
  readonly name: string;
  readonly dockerHost: string;
}

export interface LoadReport {
  /** Per host, the tags loaded into it (none when it had them all already). */
  readonly loaded: readonly { readonly host: string; readonly tags: readonly string[] }[];
  /** Bytes of the one `docker save` stream (0 when nothing needed loading). */
  readonly bytes: number;
  readonly ms: number;
}

/** The image id a host's engine has under TAG, or undefined. */
export async function hostImageId(dockerHost: string, tag: string): Promise<string | undefined> {
  try {
    const info = (await engineAt(dockerHost, 10_000).getImage(tag).inspect()) as { Id?: string };
    return info.Id;
  } catch {
    return undefined;
  }
}

export async function loadImages(
  images: readonly LocalImage[],
  hosts: readonly HostEngine[],
  o: { readonly timeoutMs: number; readonly signal?: AbortSignal; readonly progress: (line: string) => void },
): Promise<LoadReport> {
  const started = performance.now();
  // What each host holds now, per tag: only the hosts missing something get the stream.
  const held = await Promise.all(
    hosts.map(async (h) => ({
      host: h,
      ids: new Map(
        await Promise.all(images.map(async (i) => [i.tag, await hostImageId(h.dockerHost, i.tag)] as const)),
      ),
    })),
  );
  const needing = held.filter((x) => images.some((i) => x.ids.get(i.tag) !== i.id));
  if (needing.length === 0 || images.length === 0) {
    return {
      loaded: hosts.map((h) => ({ host: h.name, tags: [] })),
      bytes: 0,
      ms: performance.now() - started,
    };
  }
  const wanted = images.filter((i) => needing.some((x) => x.ids.get(i.tag) !== i.id));
  const tags = wanted.map((i) => i.tag);
  o.progress(
    `loading ${tags.join(', ')} into ${needing.map((x) => x.host.name).join(', ')} (docker save | docker load)`,
  );

  const common = { timeout: o.timeoutMs, ...(o.signal ? { cancelSignal: o.signal } : {}) };
  // Saved by id, not by tag, and tagged in each host afterwards: a rebuild on the machine while
  // this runs moves the tag, and the hosts would get another build than the one looked at.
  const save = execa('docker', ['save', ...wanted.map((i) => i.id)], {
    ...common,
    reject: false,
    stdin: 'ignore',
    // The tar goes to the loads as a stream; only the complaint is kept.
    buffer: { stdout: false, stderr: true },
  });
  const loads = needing.map((x) => ({
    host: x.host,
    proc: execa('docker', ['--host', x.host.dockerHost, 'load', '--quiet'], {
      ...common,
      reject: false,
      stdin: 'pipe',
    }),
  }));
  let bytes = 0;
  save.stdout.on('data', (chunk: Buffer) => (bytes += chunk.length));
  for (const l of loads) {
    // A load that dies makes its stdin fail (EPIPE): pipe() then drops it and the others go on;
    // the load's own result says what went wrong.
    l.proc.stdin.on('error', () => undefined);
    save.stdout.pipe(l.proc.stdin);
  }
  const [saved, loaded] = await Promise.all([save, Promise.all(loads.map((l) => l.proc))]);
  if (o.signal?.aborted) throw new SwarmInterrupted(o.signal.reason);
  if (saved.failed) {
    throw new SwarmError(
      `docker save ${tags.join(' ')} failed: ${firstLine(String(saved.stderr ?? '') || (saved.shortMessage ?? ''))}`,
      3,
    );
  }
  const failed = loaded.findIndex((r) => r.failed);
  if (failed >= 0) {
    const r = loaded[failed]!;
    // An image removed from the machine while its tar was streamed (a rebuild that dropped the
    // old build) cuts the stream short, and the load is what fails: say so.
    const gone = (await Promise.all(wanted.map(async (i) => ((await imageId(i.id)) ? '' : i.tag)))).filter(
      (t) => t.length > 0,
    );
    throw new SwarmError(
      gone.length > 0
        ? `${gone.join(', ')} was removed from the machine's Docker while it was being saved ` +
            `(rebuilt meanwhile?): run swarm up again`
        : `docker load into ${loads[failed]!.host.name} failed: ${firstLine(r.stderr || (r.shortMessage ?? ''))}`,
      3,
      `${r.stdout}\n${r.stderr}\n${String(saved.stderr ?? '')}`
        .split('\n')
        .filter((l) => l.trim().length > 0),
    );
  }
  // Each host must now hold exactly the machine's images, under their tags; a replaced older
  // build goes.
  for (const x of needing) {
    const engine = engineAt(x.host.dockerHost, 30_000);
    for (const i of wanted) {
      const at = i.tag.lastIndexOf(':');
      await engine
        .getImage(i.id)
        .tag({ repo: i.tag.slice(0, at), tag: i.tag.slice(at + 1) })
        .catch((err: Error) => {
          throw new SwarmError(`tagging ${i.tag} in ${x.host.name}: ${err.message}`, 3);
        });
    }
    for (const i of images) {
      const now = await hostImageId(x.host.dockerHost, i.tag);
      if (now !== i.id) {
        throw new SwarmError(
          `after docker load, ${x.host.name} has ${i.tag} as ${now ?? 'nothing'}, expected ${i.id}`,
          3,
        );
      }
      const before = x.ids.get(i.tag);
      if (before && before !== i.id) {
        await engine
          .getImage(before)
          .remove()
          .catch(() => undefined); // in use by a container: it stays
      }
    }
  }
  return {
    loaded: held.map((x) => ({
      host: x.host.name,
      tags: needing.includes(x) ? images.filter((i) => x.ids.get(i.tag) !== i.id).map((i) => i.tag) : [],
    })),
    bytes,
    ms: performance.now() - started,
  };
}

function firstLine(text: string): string {
  return (
    text
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l.length > 0) ?? 'failed'
  );
}
