// netem on a swarm: the interface a task's tree goes on is the one carrying its overlay address
// (a task with published ports has a second interface, for docker_gwbridge, listed first or not).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { devWithAddress } from '../../src/runtime/swarm/swarm-netem-shaper.js';

const IP_ADDR = [
  '1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever',
  '52: eth1    inet 172.18.0.3/16 brd 172.18.255.255 scope global eth1\\       valid_lft forever preferred_lft forever',
  '50: eth0    inet 10.0.1.7/24 brd 10.0.1.255 scope global eth0\\       valid_lft forever preferred_lft forever',
].join('\n');

test('the interface carrying the task’s address, not the first one', () => {
  assert.equal(devWithAddress(IP_ADDR, '10.0.1.7'), 'eth0');
  assert.equal(devWithAddress(IP_ADDR, '172.18.0.3'), 'eth1');
  assert.equal(devWithAddress(IP_ADDR, '10.0.1.70'), null, 'a prefix of another address is not it');
});
