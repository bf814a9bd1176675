#!/usr/bin/env bash
# Runs the tests of what an ordinary user runs on a machine an administrator set up (etcd,
# PostgreSQL, ZooKeeper and the node benchmark as local processes) as an ordinary user, and fails
# where one fails or skips: none of them needs root to run. Run as root after the build and the
# install scripts (.ci/run does); it makes the user (POLE_BENCH_TEST_USER, default pole-bench-ci)
# if there is none. The user reads this checkout (built) and writes only to its own temp dir.
set -euo pipefail
cd "$(dirname "$0")/.."
user="${POLE_BENCH_TEST_USER:-pole-bench-ci}"
if [[ "$(id -u)" != 0 ]]; then
  echo "test-as-user: run as root (it makes the user and switches to it)" >&2
  exit 2
fi
id "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$user"
home="$(getent passwd "$user" | cut -d: -f6)"
# Its own temp dir, so that a left-over file of a root run cannot be in its way.
tmp="$(runuser -u "$user" -- mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
files=(
  dist/test/integration/run-etcd.test.js
  dist/test/integration/local-postgres.test.js
  dist/test/integration/election.test.js
  dist/test/integration/run-zookeeper.test.js
  dist/test/integration/bench-node.test.js
)
log="$tmp/tap.log"
# The checkout as the user sees it: in place where it can read it, else a copy it can (a CI
# checkout under a directory only root may enter).
tree="$PWD"
if ! runuser -u "$user" -- test -r "$tree/package.json"; then
  tree="$tmp/tree"
  mkdir "$tree"
  tar --exclude=./.git -cf - . | tar -xf - -C "$tree"
  chown -R "$user" "$tree"
fi
set +e
runuser -u "$user" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$home" TMPDIR="$tmp" \
  sh -c 'cd "$0" && exec node --enable-source-maps --test --test-concurrency=1 --test-reporter=tap "$@"' \
  "$tree" "${files[@]}" >"$log" 2>&1
code=$?
set -e
grep -E '^# (tests|pass|fail|skipped)|^not ok|^\s+not ok' "$log" || true
# A test that skipped as this user is one an ordinary user could not run: a failure here.
skips="$(grep -E '^(ok|\s+ok) .*# SKIP' "$log" | grep -v 'test name does not match' || true)"
if [[ -n "$skips" ]]; then
  echo "test-as-user: skipped as $user (an ordinary user must be able to run these):"
  echo "$skips"
  code=1
fi
if [[ $code != 0 ]]; then
  echo "test-as-user: failed as $user; the whole log:"
  cat "$log"
fi
exit $code
