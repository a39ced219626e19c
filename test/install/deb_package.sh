#!/usr/bin/env bash
# The Debian package CPack builds: its files, its dependencies, and its tools run from the
# unpacked tree (dpkg -x: no root needed). Usage: deb_package.sh BUILD_DIR
set -euo pipefail
build=$(readlink -f "$1")
work=$(mktemp -d /tmp/mgb-deb-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v dpkg-deb > /dev/null || { echo "PASS deb package (skipped: no dpkg-deb)"; exit 0; }

(cd "$build" && cpack -G DEB -B "$work/out" > "$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; fail "cpack"; }
deb=$(ls "$work"/out/mgb_*.deb)
dpkg-deb -c "$deb" | awk '{print $6}' > "$work/files"
for f in ./usr/bin/mgbd ./usr/bin/mgb ./usr/bin/mgb-config ./usr/lib/mgb/libmgb.a \
         ./usr/lib/mgb/libmgb-guard.so ./usr/include/mgb/mgb.h ./usr/share/mgb/mgb-link-flags.txt \
         ./usr/lib/systemd/system/mgbd.service ./usr/lib/systemd/system/mgbd.socket \
         ./usr/lib/sysusers.d/mgb.conf; do
  grep -qx -- "$f" "$work/files" || fail "the package lacks $f"
done
dpkg-deb -f "$deb" Depends | grep libgrpc > /dev/null || fail "the package does not depend on gRPC"
dpkg-deb -x "$deb" "$work/root"
grep /usr/lib/mgb/libmgb.a "$work/root/usr/share/mgb/mgb-link-flags.txt" > /dev/null ||
  fail "the packaged link line does not name /usr/lib/mgb"
"$work/root/usr/bin/mgb" --version | grep '^mgb ' > /dev/null || fail "packaged mgb --version"
"$work/root/usr/bin/mgbd" --version | grep '^mgbd ' > /dev/null || fail "packaged mgbd --version"
echo "$(basename "$deb"): $(wc -l < "$work/files") entries"
echo "PASS deb package"
