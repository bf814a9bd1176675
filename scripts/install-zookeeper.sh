#!/bin/sh
# Installs what `--target zookeeper` runs, from Debian 12's own packages (no other download):
#   zookeeper          Apache ZooKeeper 3.8 (jars in /usr/share/java; its service is not started)
#   liblog4j1.2-java   log4j 1.2, and libslf4j-java its slf4j binding: without them the server logs nothing
#   default-jre-headless  the Java runtime
# Idempotent; needs root (or sudo) and Debian's package mirror.
set -eu
pkgs="zookeeper liblog4j1.2-java libslf4j-java default-jre-headless"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then
  echo "install-zookeeper: already installed:$(for p in $pkgs; do printf ' %s' "$p"; done)"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-zookeeper: installing$missing"
# A minimal Debian (debootstrap's minbase, container images) has no /usr/share/man/man1, where the
# JRE's post-install links java.1.gz: without it the JRE fails to configure.
$SUDO mkdir -p /usr/share/man/man1
# First quietly, with the package lists there are: a fresh machine has none (or stale ones). If
# that fails, update them and try again, this time saying why it fails.
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing >/dev/null 2>&1 || {
  $SUDO apt-get update -q >/dev/null
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing >/dev/null
}
# The package's own service (if systemd runs here) would hold port 2181 and is not ours: stop it.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet zookeeper 2>/dev/null; then
  $SUDO systemctl stop zookeeper || true
  $SUDO systemctl disable zookeeper >/dev/null 2>&1 || true
fi
echo "install-zookeeper: done"
