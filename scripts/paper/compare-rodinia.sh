#!/usr/bin/env bash
# scripts/paper/compare-rodinia.sh BUNDLE DEST: lays out the seven Rodinia programs of a paper
# bundle (bundle.sh: BUNDLE/nvcc as written, BUNDLE/mgb through mgb-nvcc) for
# scripts/gpu/compare-programs.sh, with small inputs. Each NAME.orig / NAME.mgb runs its program
# in a fresh directory a/b/c (srad_v1 reads ../../../data) and prints, after the program's own
# output, the checksum of every file it wrote there, so that the comparison covers the output
# files too. On the GPU machine:
#   scripts/gpu/compare-programs.sh DEST .device/bin/mgbd
set -euo pipefail
if [[ $# -ne 2 || "$1" == -h || "$1" == --help ]]; then
  sed -n '2,8p' "$0" >&2
  [[ $# -eq 1 && ( "$1" == -h || "$1" == --help ) ]] && exit 0
  exit 2
fi
bundle=$1 dest=$2
for p in srad_v1 srad_v2 bfs lavaMD backprop needle dwt2d; do
  for b in nvcc mgb; do
    [[ -x "$bundle/$b/$p" ]] || { echo "compare-rodinia: $bundle/$b/$p missing (not a bundle?)" >&2; exit 2; }
  done
done
bundle=$(cd "$bundle" && pwd)
mkdir -p "$dest/data/srad"
dest=$(cd "$dest" && pwd)
cat >"$dest/run-one.sh" <<'RUN'
#!/usr/bin/env bash
# run-one.sh PROGRAM ARGS...: runs PROGRAM in a fresh directory a/b/c whose ../../../data holds
# the inputs, prints what it printed, then the checksum of every file it wrote there.
here=$(cd "$(dirname "$0")" && pwd)
prog=$1; shift
d=$(mktemp -d /tmp/rodcmp.XXXXXX)
mkdir -p "$d/a/b/c" && ln -s "$here/data" "$d/data"
cd "$d/a/b/c" || exit 99
"$prog" "$@"; rc=$?
for f in $(ls | sort); do echo "file $f $(md5sum < "$f" | cut -c1-32)"; done
rm -rf "$d"
exit $rc
RUN
chmod +x "$dest/run-one.sh"
for p in srad_v1 srad_v2 bfs lavaMD backprop needle dwt2d; do
  for v in orig mgb; do
    b=nvcc; [[ $v == mgb ]] && b=mgb
    # The program by its path from DEST: the two travel together to the GPU machine.
    printf '#!/usr/bin/env bash\nh=$(cd "$(dirname "$0")" && pwd)\nexec "$h/run-one.sh" "$h/%s" "$@"\n' \
      "$(realpath --relative-to="$dest" "$bundle/$b/$p")" >"$dest/$p.$v"
    chmod +x "$dest/$p.$v"
  done
done
# The mix's command lines (p100_50_16jobs_0.wl), with inputs small enough for seconds.
cat >"$dest/args.txt" <<'ARGS'
srad_v1 10 0.5 502 458
srad_v2 2048 2048 0 127 0 127 0.5 2
bfs ../../../data/graph64k.txt
lavaMD -boxes1d 10
backprop 65536
needle 2048 10
dwt2d ../../../data/rgb.bmp -d 512x512 -f -5 -l 3
ARGS
python3 "$bundle/tools/gen-pgm.py" "$dest/data/srad/image.pgm"
python3 "$bundle/tools/gen-bmp.py" 512 512 "$dest/data/rgb.bmp"
"$bundle/tools/gen-bfs-graph" 65536 "$dest/data/graph64k.txt"
echo "compare-rodinia: $dest ready for scripts/gpu/compare-programs.sh"
