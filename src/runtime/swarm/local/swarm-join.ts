// Making the hosts' engines one swarm, through their API sockets: `swarm init` on the manager,
// `swarm join` of the workers with the manager's worker token, each node labelled with its data
// center, and the wait until every node is Ready with its label.
import type Docker from 'dockerode';
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { SwarmError, SwarmInterrupted } from './swarm-error.js';
import { DC_LABEL } from './swarm-labels.js';

/** The swarm's control-plane port (TLS, mutual authentication by the swarm's own CA). */
export const SWARM_PORT = 2377;

interface SwarmNodeInfo {
  readonly ID: string;
  readonly Version: { readonly Index: number };
  readonly Spec: {
    readonly Labels?: Record<string, string>;
    readonly Role: string;
    readonly Availability: string;
  };
  readonly Description?: { readonly Hostname?: string };
  readonly Status: { readonly State: string; readonly Addr?: string };
}

export interface SwarmNode {
  readonly id: string;
  readonly hostname: string;
  readonly state: string;
  readonly role: string;
  readonly labels: Readonly<Record<string, string>>;
}

async function call<T>(what: string, f: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  if (signal?.aborted) throw new SwarmInterrupted(signal.reason);
  try {
    return await f();
  } catch (err) {
    if (signal?.aborted) throw new SwarmInterrupted(signal.reason);
    throw new SwarmError(`${what}: ${(err as Error).message}`, 3);
  }
}

/** `docker swarm init` on the manager; resolves to the worker join token. */
export async function initSwarm(manager: Docker, address: string, signal?: AbortSignal): Promise<string> {
  await call(
    'swarm init on the manager',
    () => manager.swarmInit({ ListenAddr: `0.0.0.0:${SWARM_PORT}`, AdvertiseAddr: address }),
    signal,
  );
  const swarm = await call(
    'swarm inspect on the manager',
    () => manager.swarmInspect() as Promise<{ JoinTokens?: { Worker?: string } }>,
    signal,
  );
  const token = swarm.JoinTokens?.Worker;
  if (!token) throw new SwarmError('the manager gave no worker join token', 3);
  return token;
}

/**
 * Whether this machine's kernel has IPVS, which swarm's virtual IPs and routing mesh (the ingress
 * network) are made of: /proc/net/ip_vs exists once the module is in, and `swarm init` has had
 * dockerd load it if it could (its hosts share this kernel).
 */
export function kernelHasIpvs(): boolean {
  return existsSync('/proc/net/ip_vs');
}

/**
 * Removes the swarm's ingress network (the routing mesh) before any worker joins. Without IPVS it
 * cannot work: a service publishing a port through it would look published and be unreachable,
 * where without it the service is refused at once; and every engine, on stopping, waits 5 s for
 * an ingress sandbox that does not go away. Services publish in host mode instead (and use
 * endpoint mode dnsrr, the virtual IPs being IPVS too).
 */
export async function removeIngress(manager: Docker, signal?: AbortSignal): Promise<void> {
  await call('removing the ingress network', () => manager.getNetwork('ingress').remove(), signal);
}

export async function joinSwarm(
  worker: Docker,
  o: {
    readonly name: string;
    readonly address: string;
    readonly managerAddress: string;
    readonly token: string;
  },
  signal?: AbortSignal,
): Promise<void> {
  await call(
    `swarm join of ${o.name}`,
    () =>
      worker.swarmJoin({
        ListenAddr: `0.0.0.0:${SWARM_PORT}`,
        AdvertiseAddr: o.address,
        RemoteAddrs: [`${o.managerAddress}:${SWARM_PORT}`],
        JoinToken: o.token,
      }),
    signal,
  );
}

/** The swarm node id of an engine that is in a swarm. */
export async function nodeIdOf(engine: Docker, name: string, signal?: AbortSignal): Promise<string> {
  const info = await call(
    `docker info of ${name}`,
    () => engine.info() as Promise<{ Swarm?: { NodeID?: string; LocalNodeState?: string } }>,
    signal,
  );
  const id = info.Swarm?.NodeID;
  if (!id) throw new SwarmError(`${name} is not in a swarm (${info.Swarm?.LocalNodeState ?? '?'})`, 3);
  return id;
}

/** Adds LABELS to a node's spec (the update names the spec version it read, as the API wants). */
export async function labelNode(
  manager: Docker,
  nodeId: string,
  labels: Record<string, string>,
  signal?: AbortSignal,
): Promise<void> {
  const node = manager.getNode(nodeId);
  const info = await call(`node inspect ${nodeId}`, () => node.inspect() as Promise<SwarmNodeInfo>, signal);
  await call(
    `node update ${nodeId}`,
    () =>
      node.update({
        _query: { version: info.Version.Index },
        _body: { ...info.Spec, Labels: { ...(info.Spec.Labels ?? {}), ...labels } },
      }),
    signal,
  );
}

export async function listSwarmNodes(manager: Docker, signal?: AbortSignal): Promise<SwarmNode[]> {
  const nodes = await call('node ls', () => manager.listNodes() as Promise<SwarmNodeInfo[]>, signal);
  return nodes.map((n) => ({
    id: n.ID,
    hostname: n.Description?.Hostname ?? '',
    state: n.Status.State,
    role: n.Spec.Role,
    labels: n.Spec.Labels ?? {},
  }));
}

/**
 * Waits until every expected node (id → data center) is Ready and carries its data center label;
 * fails after timeoutMs saying which are not.
 */
export async function waitNodesReady(
  manager: Docker,
  expected: ReadonlyMap<string, string>,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<SwarmNode[]> {
  const started = Date.now();
  for (;;) {
    const nodes = await listSwarmNodes(manager, signal);
    const missing = [...expected].filter(([id, dc]) => {
      const n = nodes.find((x) => x.id === id);
      return !n || n.state !== 'ready' || n.labels[DC_LABEL] !== dc;
    });
    if (missing.length === 0) return nodes.filter((n) => expected.has(n.id));
    if (Date.now() - started >= timeoutMs) {
      const say = missing.map(([id, dc]) => {
        const n = nodes.find((x) => x.id === id);
        return n
          ? `${n.hostname} is ${n.state} with ${DC_LABEL}=${n.labels[DC_LABEL] ?? '(none)'}, expected ready and ${dc}`
          : `node ${id} is not in the swarm`;
      });
      throw new SwarmError(
        `the swarm's nodes were not all Ready within ${timeoutMs / 1000} s: ${say.join('; ')}`,
        3,
      );
    }
    await sleep(250, undefined, signal ? { signal } : {}).catch(() => undefined);
    if (signal?.aborted) throw new SwarmInterrupted(signal.reason);
  }
}
