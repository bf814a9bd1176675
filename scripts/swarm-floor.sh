#!/usr/bin/env bash
# The swarm's own bring-up, with no process of pole-bench in it: N services of one `sleep` task
# each, spread over the local swarm's hosts as a run spreads its tasks, on a fresh overlay (or
# none), timed from the first create until every task runs, then removed. It is the floor under
# `bench docker --runtime swarm`'s bring-up on the same machine (docs/benchmarks.md).
#
#   DOCKER_HOST=unix://…/pole-bench-swarm-1/docker.sock scripts/swarm-floor.sh [N] [overlay|internal|none] [ROUNDS]
set -euo pipefail
n=${1:-12}
net=${2:-overlay}
rounds=${3:-1}
image=${IMAGE:-pole-bench-node:0.1.0}
label=pole-bench.floor=$$
mapfile -t hosts < <(docker node ls --format '{{.Hostname}}' | sort)
[ ${#hosts[@]} -gt 0 ] || { echo "swarm-floor: no swarm nodes (is DOCKER_HOST a swarm manager?)" >&2; exit 2; }

cleanup() {
  docker service rm $(docker service ls -q --filter "label=$label") >/dev/null 2>&1 || true
  for _ in $(seq 1 50); do
    docker network rm "floor-$$" >/dev/null 2>&1 && break
    docker network ls -q --filter "name=floor-$$" | grep -q . || break
    sleep 0.2
  done
}
trap cleanup EXIT

now() { date +%s.%N; }
for round in $(seq 1 "$rounds"); do
  t0=$(now)
  args=()
  case $net in
    overlay) docker network create -d overlay --attachable --label "$label" "floor-$$" >/dev/null; args=(--network "floor-$$") ;;
    internal) docker network create -d overlay --attachable --internal --label "$label" "floor-$$" >/dev/null; args=(--network "floor-$$") ;;
    none) ;;
    *) echo "swarm-floor: network is overlay, internal or none, not $net" >&2; exit 2 ;;
  esac
  for i in $(seq 1 "$n"); do
    h=${hosts[$(((i - 1) % ${#hosts[@]}))]}
    docker service create -d --quiet --name "floor-$$-$i" --label "$label" --restart-condition none \
      --constraint "node.hostname==$h" --endpoint-mode dnsrr "${args[@]}" \
      --entrypoint sleep --stop-signal KILL "$image" 600 >/dev/null 2>&1 &
  done
  wait
  created=$(now)
  for _ in $(seq 1 600); do
    running=$(docker service ls --filter "label=$label" --format '{{.Replicas}}' | grep -c '^1/1' || true)
    [ "$running" -ge "$n" ] && break
    sleep 0.2
  done
  up=$(now)
  [ "$running" -ge "$n" ] || { echo "swarm-floor: only $running of $n tasks ran within 120 s" >&2; exit 3; }
  cleanup
  printf 'round %d: %d tasks, network %s: created %.1f s, all running %.1f s\n' \
    "$round" "$n" "$net" "$(echo "$created - $t0" | bc)" "$(echo "$up - $t0" | bc)"
done
