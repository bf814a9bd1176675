// Can the docker runtime run here? Whether a Docker daemon answers, and whether the images a
// target needs (the node image; the target's own too, for a target that has one) for this package version are in
// its image store. Used by `--runtime auto` (docker only when both
// hold) and by the Docker tests (skip, saying why, otherwise). Never pulls anything.
import { loadExeca } from './docker-cli.js';
import { nodeImageTag, packageInfo } from './image-name.js';
import { targetImageTag } from './target-images.js';
import type { ContainerImage, TargetName } from '../vocabulary/names.js';

export interface DockerStatus {
  /** A daemon answered `docker info`. */
  readonly daemon: boolean;
  /** One sentence: what answered and what is missing, for the user and for skip messages. */
  readonly reason: string;
  /** The node image's tag, when the daemon answers and every image the target needs exists. */
  readonly image?: string;
  /** The target's own image, under the target's name. */
  readonly images?: Partial<Record<ContainerImage, string>>;
}

export interface DaemonAnswer {
  readonly ok: boolean;
  /** The server's version when ok, else why not. */
  readonly detail: string;
}

/** How long a daemon gets to answer: a hung socket must not hang `--runtime auto`. */
const PROBE_TIMEOUT_MS = 5_000;

export async function daemonAnswers(): Promise<DaemonAnswer> {
  const { execa } = await loadExeca();
  const r = await execa('docker', ['info', '--format', '{{.ServerVersion}}'], {
    reject: false,
    stdin: 'ignore',
    timeout: PROBE_TIMEOUT_MS,
  });
  if (!r.failed && r.stdout.trim().length > 0) return { ok: true, detail: r.stdout.trim() };
  if (r.code === 'ENOENT') return { ok: false, detail: 'no docker CLI on PATH' };
  if (r.timedOut)
    return { ok: false, detail: `docker info got no answer within ${PROBE_TIMEOUT_MS / 1000} s` };
  const said = `${r.stderr}\n${r.stdout}`
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l.length > 0);
  const detail = said ?? `docker info failed (${(r.shortMessage ?? '').split('\n')[0]})`;
  // The daemon runs, but this user may not use its socket: say how that is granted.
  if (/permission denied/i.test(detail))
    return {
      ok: false,
      detail: `${detail} (this user may not use the daemon's socket: an administrator adds it to the docker group, usermod -aG docker USER, and it logs in again)`,
    };
  return { ok: false, detail };
}

export async function dockerStatus(
  version: string = packageInfo().version,
  /** The target whose own image its members run, if they run one (targets/registry.ts ownImageOf). */
  own?: TargetName,
): Promise<DockerStatus> {
  const daemon = await daemonAnswers();
  if (!daemon.ok) return { daemon: false, reason: `no Docker daemon answers: ${daemon.detail}` };
  // Holders and agents run the node image whatever the target; some targets' members their own.
  const tags = [nodeImageTag(version), ...(own ? [targetImageTag(own, version)] : [])];
  const { execa } = await loadExeca();
  for (const tag of tags) {
    const r = await execa('docker', ['image', 'inspect', '--format', '{{.Id}}', tag], {
      reject: false,
      stdin: 'ignore',
      timeout: PROBE_TIMEOUT_MS,
    });
    if (r.failed)
      return {
        daemon: true,
        reason: `Docker ${daemon.detail} answers but image ${tag} is missing (build it: pole-bench image build)`,
      };
  }
  return {
    daemon: true,
    reason: `Docker ${daemon.detail} answers and image${tags.length > 1 ? 's' : ''} ${tags.join(', ')} exist${tags.length > 1 ? '' : 's'}`,
    image: tags[0]!,
    ...(own ? { images: { [own]: tags[1]! } } : {}),
  };
}
