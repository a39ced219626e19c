# Sourced by /work/thirdparty/r7/{blog,poly,app}/recipe.sh (POOL set by the caller).
# build_pair NAME TREE SUBDIR BIN CMD : copies $SRC/TREE to a fresh dir twice, runs CMD (bash -c)
# in SUBDIR: once with the real toolchain, once through mgb's drop-ins; copies SUBDIR/BIN to
# pairs/NAME.orig and pairs/NAME.mgb. CMD may use $X_NVCC $X_CC $X_CXX (real or mgb driver);
# Makefiles that hard-code `nvcc` get it from PATH: the real one is /usr/local/cuda/bin/nvcc (on PATH
# already; a symlink to it breaks nvcc's own path lookup: "cicc: not found"), shim/mgb/nvcc -> mgb-nvcc.
set -uo pipefail
R7=/work/thirdparty/r7; SRC=/work/thirdparty/src; PAIRS=$R7/pairs; LOGS=$R7/logs
D=/work/main/build/rewriter
B=/work/thirdparty/build/$POOL
SHIM=$R7/$POOL/shim
mkdir -p "$PAIRS/data" "$LOGS" "$B" "$SHIM/mgb"
ln -sfn "$D/mgb-nvcc" "$SHIM/mgb/nvcc"
ONLY=("$@")
want() { ((${#ONLY[@]} == 0)) && return 0; local x; for x in "${ONLY[@]}"; do [[ $x == "$1" ]] && return 0; done; return 1; }
build_pair() {
  local name=$1 tree=$2 sub=$3 bin=$4 cmd=$5 mode w log rc
  want "$name" || return 0
  for mode in ${MODES:-orig mgb}; do  # MODES=mgb: rebuild only the rewritten side
    w=$B/$mode/$name
    rm -rf "$w"; mkdir -p "$(dirname "$w")"; cp -a "$SRC/$tree" "$w"
    rm -f "$PAIRS/$name.$mode"
    if [[ $mode == orig ]]; then
      log=$LOGS/$name.orig-build.log
      (cd "$w/$sub" && export PATH="/usr/local/cuda/bin:$PATH" X_NVCC=/usr/local/cuda/bin/nvcc X_CC=gcc X_CXX=g++ &&
        nice -n 5 bash -c "$cmd") >"$log" 2>&1
    else
      log=$LOGS/$name.mgb-build.log
      rm -f "$LOGS/$name.driver.log"
      (cd "$w/$sub" && export PATH="$SHIM/mgb:$PATH" X_NVCC=$D/mgb-nvcc X_CC=$D/mgb-cc X_CXX=$D/mgb-c++ \
          MGB_STRICT=1 MGB_NVCC_LOG=$LOGS/$name.driver.log &&
        nice -n 5 bash -c "$cmd") >"$log" 2>&1
    fi
    rc=$?
    if [[ $rc == 0 && -f "$w/$sub/$bin" ]]; then
      cp "$w/$sub/$bin" "$PAIRS/$name.$mode"; echo "$name $mode: OK"
    else
      echo "$name $mode: FAILED rc=$rc (log $log)"
    fi
  done
  if [[ -f "$PAIRS/$name.mgb" ]]; then
    echo "$name: mgb_ symbols $(nm "$PAIRS/$name.mgb" 2>/dev/null | grep -c ' mgb_'), rewrite warnings $(grep -E -c '^[^ ]+:[0-9]+:[0-9]+: warning: ' "$LOGS/$name.mgb-build.log")"
  fi
}
