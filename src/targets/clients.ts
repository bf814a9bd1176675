// The load's client for each protocol a target speaks: the agents get the protocol by name in
// their start message and pick the client here.
import { connectPoleWriter, type ClientProtocol, type ConnectWriteClient } from '../load/write-client.js';
import { connectZkWriter } from './zookeeper/zk-write-client.js';

export function writeClientFor(protocol: ClientProtocol): ConnectWriteClient {
  return protocol === 'zookeeper' ? connectZkWriter : connectPoleWriter;
}
