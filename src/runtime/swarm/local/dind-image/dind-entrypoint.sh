#!/bin/sh
# Starts the host's Docker engine in the foreground (its log is the container's log).
#
# The engine's API is served on two unix sockets: the usual /var/run/docker.sock (for `docker exec
# HOST docker …`), and /run/pole-bench-dind/docker.sock, in a directory `swarm up` mounts from the
# machine, so the harness reaches every host's engine as unix://<state dir>/hosts/<host>/docker.sock
# without any TCP port (see docs/swarm.md for why no TCP).
#
#   $1  the group id that may use the outside socket (the id of the user who ran `swarm up`)
#   POLE_BENCH_MONO_SHIFT_S  (optional) seconds the host's containers' monotonic and boot-time
#       clocks are ahead of the machine's (`swarm up --mono-shift`): the engine is started in a time
#       namespace of its own. unshare without --fork: dockerd itself stays in the machine's, every
#       process it starts (containerd, the containers) is in the new one, as on a host booted earlier.
set -eu

socket_gid="${1:-0}"
mkdir -p /run/pole-bench-dind

# A socket left by an engine that did not stop cleanly would make dockerd refuse to start.
rm -f /run/pole-bench-dind/docker.sock /var/run/docker.sock /var/run/docker.pid

# overlay2 named explicitly: if it cannot work here the engine must fail loudly rather than fall
# back to vfs, which copies every layer in full for every container.
shift_clocks=""
if [ -n "${POLE_BENCH_MONO_SHIFT_S:-}" ]; then
  shift_clocks="unshare --time --monotonic=${POLE_BENCH_MONO_SHIFT_S} --boottime=${POLE_BENCH_MONO_SHIFT_S}"
fi
# shellcheck disable=SC2086 # the prefix is words, or nothing
exec $shift_clocks dockerd \
  --host unix:///var/run/docker.sock \
  --host unix:///run/pole-bench-dind/docker.sock \
  --group "$socket_gid" \
  --storage-driver overlay2 \
  --log-level warn
