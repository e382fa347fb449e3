#!/usr/bin/env bash
# build-source.sh - build an IRC server or services package that Debian does not ship, from its source
# archive, once per machine, into a cache outside the repository; print the install prefix.
#
#   testnet/build-source.sh unrealircd|anope21|solanum|ircu
#
# The archives (see sources.txt: name, file, sha256) are looked for in IRCD_SOURCES (default
# ../shared/ircd-sources beside the repository). The install goes to
#   $IRCD_BUILD_CACHE/<name>-<sha256 of the archive, 16>-<compiler>-debian<version>/
# (default /var/cache/irc-testnet/builds), so a new archive, compiler or Debian release builds afresh and an
# unchanged one is reused at once. Builds of one name are serialised with a lock; the build log is kept as
# <prefix>.log. A missing archive exits 3 with one line saying how to provide it; a failed build exits 1
# naming the step and showing the end of its log.
#
# Needs root to install the build dependencies with apt-get when they are missing.
set -eEuo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NAME=${1:-}
SOURCES=${IRCD_SOURCES:-$(cd "$HERE/.." && pwd)/../shared/ircd-sources}
CACHE=${IRCD_BUILD_CACHE:-/var/cache/irc-testnet/builds}
JOBS=${BUILD_JOBS:-$(nproc)}

line=$(awk -v name="$NAME" '$1 == name { print $2, $3 }' "$HERE/sources.txt")
if [ -z "$NAME" ] || [ -z "$line" ]; then
  echo "usage: build-source.sh <$(awk '!/^#/ && NF { printf "%s%s", sep, $1; sep="|" }' "$HERE/sources.txt")>" >&2
  exit 2
fi
read -r FILE SHA <<<"$line"
ARCHIVE=$SOURCES/$FILE
if [ ! -f "$ARCHIVE" ]; then
  echo "no $FILE in $SOURCES: put the source archive there, or point IRCD_SOURCES at the folder that has it" >&2
  exit 3
fi

compiler=$(gcc -dumpfullversion 2>/dev/null || echo none)
debian=$(cut -d. -f1 /etc/debian_version 2>/dev/null || echo unknown)
PREFIX=$CACHE/$NAME-${SHA:0:16}-gcc$compiler-debian$debian
if [ -e "$PREFIX/.built" ]; then echo "$PREFIX"; exit 0; fi

mkdir -p "$CACHE"
exec 9>"$CACHE/.$NAME.lock"
flock 9
if [ -e "$PREFIX/.built" ]; then echo "$PREFIX"; exit 0; fi

LOG=$PREFIX.log
: >"$LOG"
STEP=
step() { STEP=$1; printf '== %s\n' "$1" >>"$LOG"; printf '[build %s] %s\n' "$NAME" "$1" >&2; }
fail() {
  echo "building $NAME failed at step \"$STEP\" (exit $1); the end of $LOG:" >&2
  tail -n 25 "$LOG" >&2
  exit 1
}
trap 'fail $?' ERR
run() { "$@" >>"$LOG" 2>&1; }

step "check the archive's sha256"
actual=$(sha256sum "$ARCHIVE" | cut -d' ' -f1)
if [ "$actual" != "$SHA" ]; then
  echo "$ARCHIVE has sha256 $actual, not the $SHA sources.txt names: a different archive" >&2
  exit 1
fi

step "install the build dependencies"
deps=(build-essential cmake pkg-config flex bison autoconf automake libtool libssl-dev libpcre2-dev
  libargon2-dev libsodium-dev libc-ares-dev libjansson-dev libsqlite3-dev libltdl-dev)
missing=()
for dep in "${deps[@]}"; do
  dpkg-query -W -f='${Status}' "$dep" 2>/dev/null | grep -q 'ok installed' || missing+=("$dep")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  run $SUDO apt-get update -qq
  run $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

step "unpack"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/build-$NAME.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
run tar -xzf "$ARCHIVE" -C "$WORK"
SRC=$(find "$WORK" -mindepth 1 -maxdepth 1 -type d | head -n 1)
rm -rf "$PREFIX"
cd "$SRC"

case $NAME in
  unrealircd)
    # Every path under the prefix; no GeoIP download; the system's argon2.
    cat >config.settings <<EOF
BASEPATH="$PREFIX"
BINDIR="$PREFIX/bin"
DATADIR="$PREFIX/data"
CONFDIR="$PREFIX/conf"
MODULESDIR="$PREFIX/modules"
LOGDIR="$PREFIX/logs"
CACHEDIR="$PREFIX/cache"
DOCDIR="$PREFIX/doc"
TMPDIR="$PREFIX/tmp"
PRIVATELIBDIR="$PREFIX/lib"
DEFPERM="0600"
SSLDIR=""
NICKNAMEHISTORYLENGTH="2000"
GEOIP="none"
MAXCONNECTIONS_REQUEST="auto"
REMOTEINC=""
CURLDIR=""
GENCERTIFICATE="0"
EXTRAPARA="--with-system-argon2"
SANITIZER=""
EOF
    step "configure"
    export MAKE="make -j$JOBS"
    run ./Config -quick
    step "make"
    run make -j"$JOBS"
    step "make install"
    run make install
    ;;
  anope21)
    step "configure"
    run cmake -DINSTDIR:STRING="$PREFIX" -DCMAKE_BUILD_TYPE:STRING=RELEASE -B build .
    step "make install"
    run make -C build -j"$JOBS" install
    ;;
  solanum)
    step "configure"
    run ./autogen.sh
    run ./configure --prefix="$PREFIX"
    step "make"
    run make -j"$JOBS"
    step "make install"
    run make install
    ;;
  ircu)
    step "configure"
    run ./autogen.sh
    # A small MAXCONNECTIONS: the default needs a hard open-files limit of 1,048,572 to start.
    run ./configure --prefix="$PREFIX" --with-maxcon=4096
    step "make"
    run make -j"$JOBS"
    step "make install"
    run make install
    ;;
esac

trap - ERR
# The daemons run as an unprivileged user (UnrealIRCd refuses root): they must read the install.
chmod -R a+rX "$PREFIX"
printf '%s %s\n' "$FILE" "$SHA" >"$PREFIX/.built"
printf '[build %s] installed in %s\n' "$NAME" "$PREFIX" >&2
echo "$PREFIX"
