// The targets by name (--target, the topology's `target:`).
import { poleTarget } from './pole/pole-target.js';
import type { TargetName } from '../vocabulary/names.js';
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
