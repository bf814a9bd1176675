#!/usr/bin/env bash
# Builds pole-bench's base image without any container registry: a minimal Debian 12 root file
# system made by debootstrap from Debian's own packages, tarred and `docker import`ed as
#   pole-bench-base:bookworm-<hash>
# where <hash> covers the suite, the variant, the package list and this recipe's version, so the
# same inputs give the same tag and an existing image is reused instead of rebuilt.
#
#   docker/base/build-base.sh            build (or reuse) the base; the last line printed is its tag
#   docker/base/build-base.sh --tag      print the tag only (nothing is built)
#
# Environment: POLE_DEBIAN_MIRROR (default http://deb.debian.org/debian), TMPDIR.
# Needs root (debootstrap chroots), debootstrap, Debian's archive keyring, and a Docker daemon.
set -euo pipefail

suite=bookworm
variant=minbase
# iproute2: ip and tc (with tc's distribution tables) for the holder containers' shaping.
# Not ca-certificates: the image talks only to its own run's containers, and Node carries its own CA
# list anyway. Not nodejs: Debian 12's is 18; the node image brings Node 20 (see ../Dockerfile).
packages=(iproute2)
# Bump when the steps below change what ends up in the image.
recipe=1
mirror="${POLE_DEBIAN_MIRROR:-http://deb.debian.org/debian}"

hash="$(printf '%s\n' "suite=$suite" "variant=$variant" "packages=${packages[*]}" "recipe=$recipe" |
  sha256sum | cut -c1-12)"
tag="pole-bench-base:$suite-$hash"

if [[ "${1:-}" == --tag ]]; then
  echo "$tag"
  exit 0
fi

say() { echo "base: $*"; }

if docker image inspect "$tag" >/dev/null 2>&1; then
  say "reusing $tag"
  echo "$tag"
  exit 0
fi

if [[ $EUID -ne 0 ]]; then
  echo "base: debootstrap needs root (it chroots into the new file system); run as root" >&2
  exit 1
fi
if ! command -v debootstrap >/dev/null 2>&1; then
  echo "base: debootstrap is missing: apt-get install debootstrap" >&2
  exit 1
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/pole-bench-base.XXXXXX")"
rootfs="$work/rootfs"
cleanup() {
  # debootstrap may leave /proc or /sys mounted inside the tree when it fails half-way.
  for m in proc sys dev/pts dev; do
    mountpoint -q "$rootfs/$m" 2>/dev/null && umount -l "$rootfs/$m" || true
  done
  rm -rf --one-file-system "$work"
}
trap cleanup EXIT

say "debootstrap $suite ($variant + ${packages[*]}) from $mirror"
started=$SECONDS
if ! debootstrap --variant="$variant" --include="$(
  IFS=,
  echo "${packages[*]}"
)" --components=main "$suite" "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1; then
  tail -n 30 "$work/debootstrap.log" >&2
  # debootstrap's own log inside the tree says which package failed.
  tail -n 30 "$rootfs/debootstrap/debootstrap.log" >&2 2>/dev/null || true
  exit 1
fi
say "debootstrap done in $((SECONDS - started)) s"

# Trim what a container never uses: downloaded .debs, package lists (an `apt-get update` fetches
# them again), documentation, manual pages, translations, logs.
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/cache/apt/*.bin \
  "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* \
  "$rootfs"/usr/share/info/* "$rootfs"/usr/share/locale/* "$rootfs"/var/log/* \
  "$rootfs"/tmp/* "$rootfs"/debootstrap
# And keep packages installed later (a derived image) from bringing them back.
cat >"$rootfs/etc/dpkg/dpkg.cfg.d/01-pole-bench-slim" <<'EOF'
path-exclude /usr/share/doc/*
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
EOF
# debootstrap writes the mirror it used; name the suite's updates and security archives as well.
cat >"$rootfs/etc/apt/sources.list" <<EOF
deb $mirror $suite main
deb $mirror $suite-updates main
deb http://deb.debian.org/debian-security $suite-security main
EOF

say "importing as $tag"
started=$SECONDS
# --numeric-owner: the tree's uids and gids are the image's own, not names looked up on the host.
tar --numeric-owner -C "$rootfs" -cf - . |
  docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["/bin/bash"]' \
    --change 'LABEL org.opencontainers.image.title="pole-bench-base"' \
    --change "LABEL org.opencontainers.image.description=\"Debian $suite ($variant + ${packages[*]}) built by debootstrap\"" \
    --change "LABEL pole-bench.base-hash=\"$hash\"" \
    - "$tag" >/dev/null
say "imported in $((SECONDS - started)) s: $(docker image inspect "$tag" --format '{{.Size}}' |
  awk '{ printf "%.1f MB", $1 / 1e6 }')"
echo "$tag"
