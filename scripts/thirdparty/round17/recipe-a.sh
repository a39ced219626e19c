#!/usr/bin/env bash
# Round r17 (engineer a): compile-only test of the mgb drop-in drivers (mgb-nvcc/mgb-cc/mgb-c++), from round16/recipe-b.sh.
# Sources (git --git-dir=/work/.mirror/OWNER+NAME/repo archive HEAD | tar -x -C src/NAME):
#   Xtra-Computing/thundersvm 5c6a056ac7f474b085d5415c81c5d48a1419642a -> src/thundersvm
#   cudpp/cudpp               9dc7357ee818498a87bc2f68f9d887c298e0e3f6 -> src/cudpp
#       submodule ext/moderngpu = moderngpu/moderngpu b6b3ed52f8f7478b969e05242980c97ff21a6ab0 (git archive that commit)
#       submodule ext/cub = NVlabs/cub 9c335b9aacff874253c2f3e79c643230317438f0: NOT in the mirror -> ext/cub left empty
#       (both builds; <cub/...> then resolves to CUDA 13's bundled CCCL cub)
#   e-ago/bitcracker          4257899212421bbdf4899f8c1b154edebde872f8 -> src/bitcracker (only blobs present in the mirror:
#       Images/*.vhd etc. are absent; g=/work/.mirror/e-ago+bitcracker/repo; git --git-dir=$g ls-tree -r HEAD | while read m t o p;
#       do git --git-dir=$g cat-file -e $o 2>/dev/null && echo "$p"; done >ok.txt; git --git-dir=$g archive HEAD $(cat ok.txt) | tar -x)
# thundersvm and cudpp use the legacy FindCUDA module (cuda_add_library), which ignores CMAKE_CUDA_COMPILER: the mgb build
# passes -DCUDA_NVCC_EXECUTABLE=mgb-nvcc as well (FindCUDA's host compiler defaults to CMAKE_C_COMPILER, i.e. mgb-cc).
# Arch (same both builds): FindCUDA pools -DCUDA_NVCC_FLAGS=-arch=sm_90; bitcracker NVCC_APPEND_FLAGS=-arch=sm_90 (its
#   Makefile's -gencode compute_70/80 stay; nvcc accepts them).
# Build: nice -n 5, -j1, make -k. Logs: logs/NAME.{orig,mgb}.log, driver log logs/NAME.driver.log.
# Usage: recipe.sh [POOL...]   (pools: thundersvm thundersvm_cxx17 cudpp bitcracker bitcracker_sm90 bitcracker_sm90_lax bitcracker_objs bitcracker_cuda13;
#   default: all, in file order). Run order used: thundersvm thundersvm_cxx17 | bitcracker, bitcracker_sm90 bitcracker_sm90_lax, bitcracker_objs,
#   cudpp, bitcracker_cuda13 (some concurrently, each -j1). Results: analysis.txt; reproducer repro/template-arg-sugar/run.sh.
set -u
R=/work/thirdparty/r17/a
MGB=/work/thirdparty/r17/mgb/bin
SRC=$R/src
LOGS=$R/logs
mkdir -p "$LOGS" "$R/build" "$R/bin"
ln -sfn "$MGB/mgb-nvcc" "$R/bin/nvcc"; ln -sfn "$MGB/mgb-c++" "$R/bin/g++"; ln -sfn "$MGB/mgb-cc" "$R/bin/gcc"
ln -sfn "$MGB/mgb-c++" "$R/bin/c++"; ln -sfn "$MGB/mgb-cc" "$R/bin/cc"
export PATH=/usr/local/cuda/bin:$PATH
MGB_CMAKE=(-DCMAKE_CUDA_COMPILER=$MGB/mgb-nvcc -DCMAKE_C_COMPILER=$MGB/mgb-cc -DCMAKE_CXX_COMPILER=$MGB/mgb-c++)
# FindCUDA unsets a -DCUDA_NVCC_EXECUTABLE given on the first configure (CUDA_TOOLKIT_ROOT_DIR_INTERNAL is still empty then),
# so the mgb build configures a second time with it (the orig build configures twice as well, without it).
MGB_CMAKE2=(-DCUDA_NVCC_EXECUTABLE=$MGB/mgb-nvcc)

want() { ((${#SEL[@]} == 0)) && return 0; local n; for n in "${SEL[@]}"; do [[ "$n" == "$1" ]] && return 0; done; return 1; }
SEL=("$@")

# cmake_pool NAME SRCDIR "CMAKE ARGS (both)" "TARGET..."
cmake_pool() {
  local name=$1 srcdir=$2 cargs=$3 t=$4 variant base bdir log venv start rc
  for variant in ${VARIANTS:-orig mgb}; do
    base=$R/build/$variant/$name
    rm -rf "$base"; mkdir -p "$(dirname "$base")"; cp -a "$SRC/$srcdir" "$base"
    if [[ $variant == orig ]]; then bdir=build; extra=(); extra2=(); venv=""
    else bdir=build-mgb; extra=("${MGB_CMAKE[@]}"); extra2=("${MGB_CMAKE2[@]}"); rm -f "$LOGS/$name.driver.log"
      venv="MGB_STRICT=1 MGB_NVCC_LOG=$LOGS/$name.driver.log"; fi
    log=$LOGS/$name.$variant.log
    start=$(date +%s)
    echo "# cd $base; env $venv nice -n 5 cmake -S . -B $bdir $cargs ${extra[*]} && env $venv nice -n 5 cmake -B $bdir ${extra2[*]} && env $venv nice -n 5 cmake --build $bdir --target $t -j1 -- -k" >"$log"
    (cd "$base" && env $venv nice -n 5 cmake -S . -B $bdir $cargs "${extra[@]}" && env $venv nice -n 5 cmake -B $bdir ${extra2[@]+"${extra2[@]}"} &&
       env $venv nice -n 5 cmake --build $bdir --target $t -j1 -- -k) >>"$log" 2>&1
    rc=$?; echo "# rc=$rc seconds=$(( $(date +%s) - start ))" >>"$log"; echo "rc=$rc" >>"$log"
    echo "$name $variant rc=$rc"
  done
}

# run_pool NAME SRCDIR SUBDIR "ENV(both)" "ENV(mgb only)" CMD...   (CMD run via bash -c in SUBDIR; PATH=$R/bin first for mgb)
run_pool() {
  local name=$1 srcdir=$2 sub=$3 envs=$4 menvs=$5; shift 5
  local variant base log venv p start rc
  for variant in ${VARIANTS:-orig mgb}; do
    base=$R/build/$variant/$name
    rm -rf "$base"; mkdir -p "$(dirname "$base")"; cp -a "$SRC/$srcdir" "$base"
    log=$LOGS/$name.$variant.log
    if [[ $variant == orig ]]; then venv="$envs"; p=$PATH
    else rm -f "$LOGS/$name.driver.log"; venv="$envs $menvs MGB_STRICT=1 MGB_NVCC_LOG=$LOGS/$name.driver.log"; p=$R/bin:$PATH; fi
    echo "# cd $base/$sub; PATH=$p env $venv nice -n 5 bash -c '$*'" >"$log"
    start=$(date +%s)
    (cd "$base/$sub" && PATH=$p env $venv nice -n 5 bash -c "$*") >>"$log" 2>&1
    rc=$?; echo "# rc=$rc seconds=$(( $(date +%s) - start ))" >>"$log"; echo "rc=$rc" >>"$log"
    echo "$name $variant rc=$rc"
  done
}

# thundersvm: library + thundersvm-train/-predict (all), Release, CUDA on, FindCUDA.
want thundersvm && cmake_pool thundersvm thundersvm "-DCUDA_TOOLKIT_ROOT_DIR=/usr/local/cuda -DCUDA_NVCC_FLAGS=-arch=sm_90" all
# thundersvm_cxx17: as written the CUDA build fails both ways (CMakeLists adds -std=c++14 to CUDA_NVCC_FLAGS for CUDA>=11;
#   CUDA 13's thrust/cub require C++17). Built again from src/thundersvm-cxx17 = a copy with that flag changed:
#   cp -a src/thundersvm src/thundersvm-cxx17; sed -i 's/-std=c++14 -Wno-deprecated/-std=c++17 -Wno-deprecated/' src/thundersvm-cxx17/CMakeLists.txt
want thundersvm_cxx17 && cmake_pool thundersvm_cxx17 thundersvm-cxx17 "-DCUDA_TOOLKIT_ROOT_DIR=/usr/local/cuda -DCUDA_NVCC_FLAGS=-arch=sm_90" all
# cudpp: subset = the `cudpp` static library target (14 app/*.cu + mgpucontext.cu + 4 .cpp). Its default CUDPP_GENCODE_SM30=ON
#   (compute_30, rejected by CUDA 13) is switched off by a cache option (both builds). cudpp_hash is not built: it passes
#   -gencode compute_20 unconditionally (rejected by CUDA 13 both ways); apps are off by default (CUDPP_BUILD_APPLICATIONS).
want cudpp && cmake_pool cudpp cudpp "-DCUDA_TOOLKIT_ROOT_DIR=/usr/local/cuda -DCUDA_NVCC_FLAGS=-arch=sm_90 -DCUDPP_GENCODE_SM30=OFF" "${CUDPP_TARGETS:-cudpp}"
# bitcracker: src_CUDA/Makefile as written (one nvcc command, 4 .cu); nvcc from PATH (= mgb-nvcc symlink in the mgb build)
want bitcracker && run_pool bitcracker bitcracker src_CUDA "NVCC_APPEND_FLAGS=-arch=sm_90" "" 'make -k -j1'
# bitcracker_sm90: as written the Makefile fails both ways at once ("nvcc fatal: Unsupported gpu architecture 'compute_70'",
#   CUDA 13 dropped sm_70; NVCC_APPEND_FLAGS cannot remove a -gencode). Built again from src/bitcracker-sm90 = a copy with the
#   two -gencode pairs replaced: cp -a src/bitcracker src/bitcracker-sm90;
#   sed -i 's/-gencode arch=compute_70,code=sm_70 -gencode arch=compute_80,code=sm_80/-arch=sm_90/' src/bitcracker-sm90/src_CUDA/Makefile
want bitcracker_sm90 && run_pool bitcracker_sm90 bitcracker-sm90 src_CUDA "" "" 'make -k -j1'
# bitcracker_sm90_lax: the same, mgb build only, without MGB_STRICT (fallback path), driver log logs/bitcracker_sm90_lax.driver.log
if want bitcracker_sm90_lax; then
  b=$R/build/mgb/bitcracker_sm90_lax; rm -rf $b; cp -a $SRC/bitcracker-sm90 $b; rm -f $LOGS/bitcracker_sm90_lax.driver.log
  echo "# cd $b/src_CUDA; PATH=$R/bin:\$PATH MGB_NVCC_LOG=$LOGS/bitcracker_sm90_lax.driver.log nice -n 5 make -k -j1" >$LOGS/bitcracker_sm90_lax.mgb.log
  (cd $b/src_CUDA && PATH=$R/bin:$PATH MGB_NVCC_LOG=$LOGS/bitcracker_sm90_lax.driver.log nice -n 5 make -k -j1) >>$LOGS/bitcracker_sm90_lax.mgb.log 2>&1
  rc=$?; echo "rc=$rc" >>$LOGS/bitcracker_sm90_lax.mgb.log; echo "bitcracker_sm90_lax mgb rc=$rc"
fi
# bitcracker_objs: main.cu fails both ways with CUDA 13 (cudaDeviceProp::clockRate etc. were removed), and nvcc stops there,
#   so the other three sources never compile in bitcracker_sm90. Supplement (not the project's build system): the Makefile's
#   nvcc flags, one -c per remaining source, in src/bitcracker-sm90/src_CUDA; -Xptxas -v output (registers/smem) is compared too.
want bitcracker_objs && run_pool bitcracker_objs bitcracker-sm90 src_CUDA "" "" \
  'rc=0; for f in cuda_attack.cu utils.cu w_blocks.cu; do echo "+ nvcc -arch=sm_90 -Xptxas -v -c $f"; nvcc -arch=sm_90 -Xptxas -v -c $f || rc=1; done; ls -l *.o; exit $rc'
# bitcracker_cuda13: src/bitcracker-cuda13 = bitcracker-sm90 with main.cu lines 72-82 edited (same line count) to use fields CUDA 13
#   still has: sed -i '72,82{s/prop\.clockRate/prop.major/g; s/prop\.memoryClockRate/prop.memoryBusWidth/g;
#   s/prop\.deviceOverlap/prop.asyncEngineCount/; s/prop\.kernelExecTimeoutEnabled/prop.concurrentKernels/}' .../src_CUDA/main.cu
#   then the Makefile as is (one nvcc compile+link of all four sources).
want bitcracker_cuda13 && run_pool bitcracker_cuda13 bitcracker-cuda13 src_CUDA "" "" 'make -k -j1 && ls -l bitcracker_cuda'
