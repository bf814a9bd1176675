// The targets by name (--target, the topology's `target:`, the agents' write clients, the images).
// Each target file is light: its plan and final read load when a run needs them.
import { poleTarget } from './pole/pole-target.js';
import type { TargetName } from '../vocabulary/names.js';
import type { TargetImage } from '../image/target-images.js';
import type { ClientProtocol, ConnectWriteClient } from '../load/write-client.js';
import type { Target, TargetOption } from './target.js';
import { etcdTarget } from './etcd/etcd-target.js';
import { zookeeperTarget } from './zookeeper/zookeeper-target.js';

const TARGETS: Readonly<Record<TargetName, Target>> = {
  pole: poleTarget,
  zookeeper: zookeeperTarget,
  etcd: etcdTarget,
};

/** Every target's own run option, with its target. */
export function targetOptions(): ReadonlyArray<{
  readonly target: TargetName;
  readonly option: TargetOption;
}> {
  return Object.values(TARGETS).flatMap((t) => (t.option ? [{ target: t.name, option: t.option }] : []));
}

export function targetNamed(name: TargetName): Target {
  return TARGETS[name];
}

/** The image target `t`'s members run besides the node image (holders and agents run that), if any. */
export function ownImageOf(t: Target): TargetImage | undefined {
  return t.members.image === 'node' ? undefined : { target: t.name, recipe: t.members.image };
}

/** Every target's own image: what `image build` builds and `swarm up` loads beside the node image. */
export function targetImages(): TargetImage[] {
  return Object.values(TARGETS).flatMap((t) => ownImageOf(t) ?? []);
}

/** The load's client for a protocol: the agents get it by name in their start message. */
export function writeClientFor(protocol: ClientProtocol): ConnectWriteClient {
  return TARGETS[protocol].connect;
}
