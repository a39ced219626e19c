#!/usr/bin/env bash
# Round 7, pool blog: NVIDIA-developer-blog/code-samples @ 72d62ec46444 extracted to /work/thirdparty/src/blog
#   (git --git-dir=/work/.mirror/NVIDIA-developer-blog+code-samples/repo archive HEAD | tar -x -C /work/thirdparty/src/blog)
# c++11_cuda/cpp11-range is a submodule: harrism/cpp11-range @ 70f844968c5f, extracted into it
#   (git --git-dir=/work/.mirror/harrism+cpp11-range/repo archive 70f844968c5f669ce85f8ce4cbd24a3584c57f4b | tar -x -C .../c++11_cuda/cpp11-range)
# posts/rnn (LSTM) was dropped: `return time < 0;` in main is a hard g++ error (not -fpermissive-able);
#   its mgb side fails earlier anyway (repro/implicit_time_decl.cu).
# Usage: recipe.sh [NAME...]   (no names: all). Builds each program as written and through mgb's drop-ins.
POOL=blog
source /work/thirdparty/r7/common-recipe.sh

# Makefile hard-codes `nvcc`; arch through its own CUDA_ARCH_FLAGS variable.
build_pair blog-um-cpp2 blog/posts/unified-memory . dataElem_um_c++_2 \
  'make dataElem_um_c++_2 CUDA_ARCH_FLAGS=-arch=sm_90'
# Makefile hard-codes `nvcc`, no arch (CUDA 13 default sm_75 + PTX, JIT on H100) and --std=c++11,
# which CUDA 13's Thrust rejects ("Thrust requires at least C++17"): c++11 -> c++17.
build_pair blog-cxx11 blog/c++11_cuda . c++11_cuda "sed -i 's/--std=c++11/--std=c++17/' Makefile && make"
# makefile hard-codes -arch=sm_20 (gone from CUDA 13): the one edit a user makes, sm_20 -> sm_90.
build_pair blog-sepcomp blog/posts/separate-compilation-linking . app \
  "sed -i 's/-arch=sm_20/-arch=sm_90/' makefile && make"
# No build file: the post's nvcc command line.
build_pair blog-transpose blog/series/cuda-cpp/transpose . transpose '$X_NVCC -O3 -arch=sm_90 transpose.cu -o transpose'
# Makefile: CXX (its nvcc), CUDA_HOME, GPU_ARCH are its variables.
build_pair blog-gups blog/posts/gups . gups 'make CUDA_HOME=/usr/local/cuda CXX=$X_NVCC GPU_ARCH=90'

# Inputs: c++11_cuda opens "warandpeace.txt" in the cwd (the pairs dir); a copy is also kept in data/.
if want blog-cxx11; then
  mkdir -p "$PAIRS/data/blog-cxx11"
  cp "$SRC/blog/c++11_cuda/warandpeace.txt" "$PAIRS/data/blog-cxx11/warandpeace.txt"
  cp "$SRC/blog/c++11_cuda/warandpeace.txt" "$PAIRS/warandpeace.txt"
fi

cat > "$R7/blog/args.blog.txt" <<'ARGS'
blog-um-cpp2
blog-cxx11
blog-sepcomp 4000000 1
blog-transpose
blog-gups -n 27
ARGS
cp "$R7/blog/args.blog.txt" "$PAIRS/args.blog.txt"
