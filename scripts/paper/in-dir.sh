#!/bin/sh
# in-dir.sh DIR PROGRAM [ARG...]: runs PROGRAM in DIR (made if missing). Gives each job of a mix
# its own working directory, as a batch system would: the Rodinia programs write their outputs
# (srad_v1's image_out.pgm, bfs's result.txt) under fixed names in the current directory.
[ $# -ge 2 ] || { echo "usage: in-dir.sh DIR PROGRAM [ARG...]" >&2; exit 2; }
mkdir -p "$1" && cd "$1" || exit 2
shift
exec "$@"
