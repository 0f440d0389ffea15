#!/bin/sh
# Installs everything Meshplan needs to build, test and run on Debian 12, with apt (sudo when not root).
# Safe to run again: when every package is already there it changes nothing.
set -eu
PACKAGES="cmake make g++ qt6-base-dev qt6-svg-dev libqcustomplot-dev nlohmann-json3-dev libgl-dev \
libbenchmark-dev fonts-dejavu-core xvfb xauth"
missing=""
for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
