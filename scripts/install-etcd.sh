#!/bin/sh
# Installs what `--target etcd` runs, from Debian 12's own packages (no other download):
#   etcd-server   etcd 3.4 (/usr/bin/etcd; its service is not started, or stopped when it was)
#   util-linux    unshare and setpriv: each member runs in a mount namespace of its own with its own
#                 /etc/hosts (docs/etcd.md says why), under a parent-death signal
# Idempotent; needs root (or sudo) and Debian's package mirror.
set -eu
pkgs="etcd-server util-linux"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then
  echo "install-etcd: already installed:$(for p in $pkgs; do printf ' %s' "$p"; done)"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-etcd: installing$missing"
# First quietly, with the package lists there are: a fresh machine has none (or stale ones). If
# that fails, update them and try again, this time saying why it fails.
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing >/dev/null 2>&1 || {
  $SUDO apt-get update -q >/dev/null
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing >/dev/null
}
# The package's own service (if systemd runs here) would hold ports 2379/2380 and is not ours.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet etcd 2>/dev/null; then
  $SUDO systemctl stop etcd || true
  $SUDO systemctl disable etcd >/dev/null 2>&1 || true
fi
echo "install-etcd: done"
