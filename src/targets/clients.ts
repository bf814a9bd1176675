// The load's client for each protocol a target speaks: the agents get the protocol by name in
// their start message and pick the client here.
import { connectPoleWriter, type ClientProtocol, type ConnectWriteClient } from '../load/write-client.js';
import { connectEtcdWriter } from './etcd/etcd-write-client.js';
import { connectZkWriter } from './zookeeper/zk-write-client.js';

const CLIENTS: Readonly<Record<ClientProtocol, ConnectWriteClient>> = {
  pole: connectPoleWriter,
  zookeeper: connectZkWriter,
  etcd: connectEtcdWriter,
};

export function writeClientFor(protocol: ClientProtocol): ConnectWriteClient {
  return CLIENTS[protocol];
}
