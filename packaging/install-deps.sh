#!/bin/sh
# Installs everything Meshplan needs to build, test and run on Debian 12, with apt (sudo when not root).
# Safe to run again: when every package is already there it changes nothing. dpkg-dev is for the
# .deb (cpack runs dpkg-shlibdeps).
#   sh packaging/install-deps.sh              build, test and run
#   sh packaging/install-deps.sh --hardening  also what packaging/ci-hardening.sh needs: clang and
#                                             libFuzzer, a symbolizer, the package and desktop-file validators
set -eu
PACKAGES="cmake make g++ qt6-base-dev qt6-svg-dev libqcustomplot-dev nlohmann-json3-dev libgl-dev \
libbenchmark-dev fonts-dejavu-core xvfb xauth dpkg-dev"
case "${1:-}" in
    "") ;;
    --hardening) PACKAGES="$PACKAGES clang libclang-rt-14-dev llvm-14 file desktop-file-utils \
appstream groff-base man-db" ;;
    *) echo "usage: sh packaging/install-deps.sh [--hardening]" >&2; exit 2 ;;
esac
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
