#!/bin/sh
# Installs what `pole-bench election --backend db` runs its own PostgreSQL with, from Debian 12's
# own packages (no other download):
#   postgresql   PostgreSQL 15 (binaries in /usr/lib/postgresql/15/bin)
# The harness never uses the package's cluster: it makes a throwaway one per run (initdb in a temp
# dir, its own port on loopback). So the package's cluster is stopped if installing it started it.
# Idempotent; needs root (or sudo) and Debian's package mirror.
set -eu
pkgs="postgresql"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if [ -z "$missing" ]; then
  echo "install-postgresql: already installed:$(for p in $pkgs; do printf ' %s' "$p"; done)"
else
  echo "install-postgresql: installing$missing"
  # First quietly, with the package lists there are: a fresh machine has none (or stale ones). If
  # that fails, update them and try again, this time saying why it fails.
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing >/dev/null 2>&1 || {
    $SUDO apt-get update -q >/dev/null
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing >/dev/null
  }
fi
# The package's own cluster (main, port 5432), started by the package's scripts under systemd or
# without it, is not ours: it would only hold port 5432 and memory. Stop it (and under systemd keep
# it from starting at boot); both ways are tried, since either may be how it was started.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet postgresql 2>/dev/null; then
  $SUDO systemctl stop postgresql || true
  $SUDO systemctl disable postgresql >/dev/null 2>&1 || true
fi
if command -v pg_lsclusters >/dev/null 2>&1; then
  pg_lsclusters --no-header 2>/dev/null | while read -r ver name _port status _rest; do
    case "$status" in
      online*) $SUDO pg_ctlcluster "$ver" "$name" stop || true ;;
    esac
  done
fi
echo "install-postgresql: done"
