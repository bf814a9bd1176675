#!/bin/sh
# Installs what the clock-offset test shifts a process's wall clock with, from Debian 12's own
# packages (no other download):
#   libfaketime   the LD_PRELOAD library (libfaketime.so.1, in /usr/lib/<triplet>/faketime/); the
#                 test sets FAKETIME itself, so the `faketime` wrapper is not needed
# Idempotent; needs root (or sudo) and Debian's package mirror.
set -eu
pkgs="libfaketime"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then
  echo "install-libfaketime: already installed:$(for p in $pkgs; do printf ' %s' "$p"; done)"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-libfaketime: installing$missing"
# First quietly, with the package lists there are: a fresh machine has none (or stale ones). If
# that fails, update them and try again, this time saying why it fails.
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing >/dev/null 2>&1 || {
  $SUDO apt-get update -q >/dev/null
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing >/dev/null
}
echo "install-libfaketime: done"
