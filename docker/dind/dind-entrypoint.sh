#!/bin/sh
# Starts the host's Docker engine in the foreground (its log is the container's log).
#
# The engine's API is served on two unix sockets: the usual /var/run/docker.sock (for `docker exec
# HOST docker …`), and /run/pole-bench-dind/docker.sock, in a directory `swarm up` mounts from the
# machine, so the harness reaches every host's engine as unix://<state dir>/hosts/<host>/docker.sock
# without any TCP port (see docs/swarm.md for why no TCP).
#
#   $1  the group id that may use the outside socket (the id of the user who ran `swarm up`)
set -eu

socket_gid="${1:-0}"
mkdir -p /run/pole-bench-dind

# A socket left by an engine that did not stop cleanly would make dockerd refuse to start.
rm -f /run/pole-bench-dind/docker.sock /var/run/docker.sock /var/run/docker.pid

# overlay2 named explicitly: if it cannot work here the engine must fail loudly rather than fall
# back to vfs, which copies every layer in full for every container.
exec dockerd \
  --host unix:///var/run/docker.sock \
  --host unix:///run/pole-bench-dind/docker.sock \
  --group "$socket_gid" \
  --storage-driver overlay2 \
  --log-level warn
