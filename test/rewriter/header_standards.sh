#!/usr/bin/env bash
# The headers the rewrite and the drivers insert (mgb/mgb.h, mgb/unseen_tu.h) compile in every
# language standard a program may be written in: C89/gnu89/C99/C11 and C++98/03/11/14/17/20 with
# -pedantic-errors and common -W flags as errors, and in nvcc at -std=c++11/c++14; mgb_arg picks the
# same case at each C++ standard (pointer: mgb_real_ptr; trivially copyable, pointer-sized or more:
# mgb_translate_words on a copy; else the value itself). Before: mgb.h needed C++17.
# Usage: header_standards.sh RUNTIME_INCLUDE CUDA_INCLUDE [NVCC]
set -euo pipefail
inc=$1 cuda=$2 nvcc=${3:-}
dir=$(mktemp -d /tmp/mgb-headers.XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail=0

cat >"$dir/probe.c" <<'C'
#include <mgb/mgb.h>
#include <mgb/unseen_tu.h>
int use(void);
int use(void) {
  void *p = 0;
  mgb_dim3 d;
  d.x = d.y = d.z = 1;
  (void)d;
  return mgb_cudaMalloc(&p, 16) == cudaSuccess ? 0 : 1;
}
C
cflags=(-Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wredundant-decls
        -Wold-style-definition -Wundef -Wcast-qual -Werror -pedantic-errors)
for std in c89 gnu89 c99 c11; do
  if ! gcc -std=$std "${cflags[@]}" -I"$inc" -isystem "$cuda" -c "$dir/probe.c" -o "$dir/c.o" \
      2>"$dir/err"; then
    echo "FAIL: gcc -std=$std: $(head -5 "$dir/err")" >&2; fail=1
  fi
done

# Stand-ins for libmgb's two translation calls count which case mgb_arg took.
cat >"$dir/probe.cpp" <<'CPP'
#include <mgb/mgb.h>
#include <mgb/unseen_tu.h>
#include <cstdio>
#include <string>
static int ptr_calls, word_calls;
extern "C" void *mgb_real_ptr(const void *p) { ++ptr_calls; return const_cast<void *>(p); }
extern "C" void mgb_translate_words(void *, size_t) { ++word_calls; }
extern "C" void mgb_note_unseen_code(const char *) {}
struct Big { float *a; int n; };
struct Small { char c; };
int main() {
  float *p = nullptr;
  const int *cp = nullptr;
  Big big = {nullptr, 3};
  if (mgb_arg(p) != p || mgb_arg(cp) != cp || mgb_arg(big).n != 3)
    return 2;
  (void)mgb_arg(Small{}); (void)mgb_arg(3); (void)mgb_arg(3L); (void)mgb_arg(std::string("x"));
  std::printf("%d %d\n", ptr_calls, word_calls);
  // 2 pointers; Big and long (pointer-sized): translated copies; Small, int, std::string: as is.
  return ptr_calls == 2 && word_calls == 2 ? 0 : 1;
}
CPP
cxxflags=(-Wall -Wextra -Wshadow -Wredundant-decls -Wundef -Wcast-qual -Wold-style-cast
          -Wzero-as-null-pointer-constant -Werror -pedantic-errors)
for std in c++11 c++14 c++17 c++20; do
  if ! g++ -std=$std "${cxxflags[@]}" -I"$inc" -isystem "$cuda" "$dir/probe.cpp" -o "$dir/cxx" \
      2>"$dir/err"; then
    echo "FAIL: g++ -std=$std: $(head -5 "$dir/err")" >&2; fail=1; continue
  fi
  if ! out=$("$dir/cxx"); then echo "FAIL: mgb_arg's cases at $std: $out" >&2; fail=1; fi
done
# C++98/03 host files that call the runtime (g++ compiles CUDA's headers there): the rewrite only
# renames their calls, so the typed twins and mgb_dim must be there (mgb_arg/mgb_prepare: C++11).
cat >"$dir/probe98.cpp" <<'CPP'
#include <mgb/mgb.h>
#include <mgb/unseen_tu.h>
int use();
int use() {
  float *p = 0;
  mgb_dim3 d = mgb_dim(dim3(2, 3, 4));
  if (mgb_cudaMalloc(&p, 16) != cudaSuccess) return 1;
  return static_cast<int>(d.x + d.y + d.z);
}
CPP
for std in c++98 c++03; do
  if ! g++ -std=$std -Wall -Wextra -Wshadow -Wredundant-decls -Wundef -Wcast-qual -Wold-style-cast \
      -Werror -pedantic-errors -I"$inc" -isystem "$cuda" -c "$dir/probe98.cpp" \
      -o "$dir/cxx98.o" 2>"$dir/err"; then
    echo "FAIL: g++ -std=$std: $(head -5 "$dir/err")" >&2; fail=1
  fi
done
if [[ -n "$nvcc" ]]; then
  cp "$dir/probe.cpp" "$dir/probe.cu"
  for std in c++11 c++14; do
    if ! "$nvcc" -std=$std -I"$inc" -c "$dir/probe.cu" -o "$dir/cu.o" 2>"$dir/err"; then
      echo "FAIL: nvcc -std=$std: $(grep -m3 error "$dir/err")" >&2; fail=1
    fi
  done
fi
((fail == 0)) && echo "PASS: mgb.h and unseen_tu.h at C89-C11 and C++98-20${nvcc:+ (nvcc c++11/14)}"
exit $fail
