#!/usr/bin/env bash
# Bring-up on the local swarm, two builds alternated in one sitting (docs/benchmarks.md):
#   scripts/ab-swarm-bringup.sh OLD_CHECKOUT NEW_CHECKOUT [ROUNDS]
# Each checkout must be built, with its node image built and tagged in the machine's engine as
# pole-bench-node:old and pole-bench-node:new, and both images loaded into every host of a local
# swarm made by `pole-bench swarm up` (docker save … | docker load on each host's socket). Before
# each run the build's image is tagged pole-bench-node:<version> on every host, then that build's
# `bench docker --runtime swarm --runs 1` runs. Prints one line per run with the load average.
set -euo pipefail
old=${1:?old checkout}
new=${2:?new checkout}
rounds=${3:-3}
state=${POLE_SWARM_STATE:-$HOME/.local/state/pole-bench/swarm}
version=$(node -p "require('$new/package.json').version")
hosts=("$state"/hosts/*/docker.sock)
for ((r = 1; r <= rounds; r++)); do
  for v in old new; do
    for sock in "${hosts[@]}"; do DOCKER_HOST="unix://$sock" docker tag "pole-bench-node:$v" "pole-bench-node:$version"; done
    dir=$new
    [ "$v" = old ] && dir=$old
    out=$(cd "$dir" && DOCKER_HOST="unix://$state/hosts/pole-bench-swarm-1/docker.sock" \
      node bin/run.js bench docker --runtime swarm --runs 1 2>&1 | grep '^run 1' || true)
    echo "$(date +%T) load $(cut -d' ' -f1 /proc/loadavg) $v: $out"
  done
done
