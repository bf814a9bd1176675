#!/usr/bin/env bash
# The fresh-container case: `npm install && npm test` in a Debian 12 container holding only Node 20
# and npm, with Docker's default privileges (no --privileged, no added capability), root inside as
# in most CI containers. Everything the project needs beyond that it must install itself (the
# ZooKeeper and PostgreSQL packages, by its scripts) or skip, saying why (the etcd tests, where no
# namespace can be made for a member; the Docker tests, with no daemon inside). It prints
# `pole-bench doctor` after the tests (and the installs they made). Exits with npm
# test's code. About 15 minutes on a 2-core machine; the nightly workflow runs it, .ci/run does not.
#
# No container registry is used: the image is the offline Debian base `pole-bench image build
# --offline` made, with this machine's Node binary and npm copied in. The checkout goes in as
# `git archive HEAD` (what is committed). The container and image are removed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
base="$(docker images --format '{{.Repository}}:{{.Tag}}' | grep -m1 '^pole-bench-base:' || true)"
if [[ -z "$base" ]]; then
  echo "test-in-container: no pole-bench-base image: run \`sudo node bin/run.js image build --offline\` first" >&2
  exit 2
fi
node_bin="$(readlink -f "$(command -v node)")"
npm_dir="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")"
ctx="$(mktemp -d)"
name="pole-bench-fresh-$$"
image="pole-bench-fresh:$$"
cleanup() {
  docker rm -f "$name" >/dev/null 2>&1 || true
  docker rmi -f "$image" >/dev/null 2>&1 || true
  rm -rf "$ctx"
}
trap cleanup EXIT
cp "$node_bin" "$ctx/node"
cp -a "$npm_dir" "$ctx/npm"
git archive --format=tar --prefix=src/ HEAD >"$ctx/src.tar"
# The host's trust for the npm registry goes in too: a network whose proxy presents its own CA
# (NODE_EXTRA_CA_CERTS, npm's cafile) needs it inside as outside.
ca="${NODE_EXTRA_CA_CERTS:-$(npm config get cafile 2>/dev/null || true)}"
ca_lines=""
if [[ -n "$ca" && "$ca" != null && -f "$ca" ]]; then
  cp "$ca" "$ctx/host-ca.crt"
  ca_lines="COPY host-ca.crt /etc/ssl/certs/pole-bench-host-ca.crt
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/pole-bench-host-ca.crt npm_config_cafile=/etc/ssl/certs/pole-bench-host-ca.crt"
fi
cat >"$ctx/Dockerfile" <<DOCKERFILE
FROM $base
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx
$ca_lines
ADD src.tar /work/
WORKDIR /work/src
DOCKERFILE
DOCKER_BUILDKIT=0 docker build --quiet --label pole-bench=true -t "$image" "$ctx" >/dev/null
echo "test-in-container: $image from $base, node $("$node_bin" --version), npm $(npm --version)"
set +e
docker run --name "$name" --label pole-bench=true "$image" \
  sh -c 'npm install --no-audit --no-fund && { npm test; code=$?; node bin/run.js doctor; exit $code; }'
code=$?
set -e
echo "test-in-container: npm install && npm test exited $code"
exit $code
