#!/usr/bin/env bash
# Formats the project's C++ with clang-format (.clang-format at the root and in rewriter/).
# --check: change nothing, list the files that are not formatted, exit 1 if any.
# Test data under test/rewriter/ (inputs and projects) and the CUDA examples are left as written.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ "${1:-}" == --help || "${1:-}" == -h ]] && { sed -n '2,4p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
[[ $# -eq 0 || "$1" == --check ]] && (($# <= 1)) ||
  { echo "format.sh: unknown arguments '$*' (usage: scripts/format.sh [--check])" >&2; exit 2; }
command -v clang-format >/dev/null || { echo "format.sh: clang-format not found (apt-get install clang-format)" >&2; exit 2; }
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.cc' |
  grep -E '^(rewriter|service|tools|runtime|bench|guard|test|proto)/' |
  grep -vE '^test/rewriter/(inputs|makefile_project|cmake_project|fallback|whole_program)/')
if [[ "${1:-}" == --check ]]; then
  bad=()
  for f in "${files[@]}"; do
    clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  ((${#bad[@]} == 0)) && { echo "format.sh: ${#files[@]} files formatted"; exit 0; }
  printf 'not formatted: %s\n' "${bad[@]}"; exit 1
fi
clang-format -i "${files[@]}"
echo "format.sh: formatted ${#files[@]} files"
