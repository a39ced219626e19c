#!/usr/bin/env python3
"""The checks of a golden test after its FileCheck lines (lit's %golden, test/rewriter/lit.cfg.py).

A test's RUN lines rewrite its sources into OUT/first (`%mgb-rewrite --root DIR -o OUT/first
SOURCES -- FLAGS`) and FileCheck the rewrite; this script then checks, in order:
  1. every rewritten source compiles: `nvcc -arch=sm_90 -c`, or with --host-compiler (gcc or g++,
     for C/C++ host files) `-c -Wall -Werror` with the CUDA include directory;
  2. idempotence: `mgb-rewrite --check` on the rewritten sources exits 0 (nothing to change);
  3. `mgb-rewrite --check` on the original sources exits 1 and prints a `+++ ... (mgb-rewrite)`
     diff;
  4. line numbers: after the include block, every line of a rewrite that is, unchanged, a line the
     original holds once sits at that line's original number, as the rewrite's #line directives
     give it.
The root is the directory of the first source, as for the rewrite. FLAGS are the compiler flags
the rewrite got (after its `--`), given to each compile and to both --check runs.

Usage: golden.py --mgb-rewrite TOOL --nvcc NVCC --include RUNTIME_INCLUDE
                 --cuda-include CUDA_INCLUDE [--host-compiler CC] OUT SOURCE... [-- FLAG...]
"""
import argparse
import os
import re
import subprocess
import sys


def run(cmd):
    # errors="replace": a source may hold bytes that are not UTF-8 (byte_order_mark.cu).
    return subprocess.run(cmd, capture_output=True, text=True, errors="replace")


def fail(message, result):
    sys.exit(f"golden: {message} (exit {result.returncode}):\n{result.stdout}{result.stderr}")


LINE_DIRECTIVE = re.compile(r'#line (\d+)(?: ".*")?$')


def check_line_numbers(original_path, rewritten_path):
    """Lines kept as written must keep their numbers (source identity, docs/rewriter.md)."""
    with open(original_path, "rb") as f:
        original = f.read().decode("utf-8", "replace").splitlines()
    with open(rewritten_path, "rb") as f:
        rewritten = f.read().decode("utf-8", "replace").splitlines()
    where = {}
    for number, line in enumerate(original, 1):
        where.setdefault(line, []).append(number)
    number = None  # before the first #line: leading comments and the include block
    for line in rewritten:
        directive = LINE_DIRECTIVE.match(line)
        if directive:
            number = int(directive.group(1))
            continue
        if number is None:
            continue
        places = where.get(line, [])
        if len(line.strip()) > 3 and len(places) == 1 and places[0] != number:
            sys.exit(f"golden: {os.path.basename(rewritten_path)}: `{line.strip()}` is line "
                     f"{places[0]} of the original but line {number} of the rewrite")
        number += 1
    if number is None and original != rewritten:
        sys.exit(f"golden: {os.path.basename(rewritten_path)} has no #line directive")


def main():
    argv = sys.argv[1:]
    flags = []
    if "--" in argv:
        flags = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mgb-rewrite", required=True)
    parser.add_argument("--nvcc", required=True)
    parser.add_argument("--include", required=True, help="runtime/include (mgb/mgb.h)")
    parser.add_argument("--cuda-include", required=True)
    parser.add_argument("--host-compiler", help="gcc or g++: compile the rewrite as host code")
    parser.add_argument("out")
    parser.add_argument("sources", nargs="+")
    args = parser.parse_args(argv)

    root = os.path.dirname(args.sources[0])
    first = os.path.join(args.out, "first")
    rewritten = [os.path.join(first, os.path.basename(s)) for s in args.sources]
    for path in rewritten:
        obj = os.path.join(args.out, os.path.basename(path) + ".o")
        includes = [f"-I{args.include}", f"-I{first}", f"-I{root}"]
        if args.host_compiler:
            cmd = [args.host_compiler, "-c", "-Wall", "-Werror", *includes,
                   f"-I{args.cuda_include}"]
        else:
            cmd = [args.nvcc, "-arch=sm_90", "-c", *includes]
        result = run([*cmd, *flags, path, "-o", obj])
        if result.returncode != 0:
            fail(f"compiling rewritten {os.path.basename(path)} failed", result)

    for source, path in zip(args.sources, rewritten):
        check_line_numbers(source, path)

    result = run([args.mgb_rewrite, "--root", first, "--check", *rewritten, "--", f"-I{root}",
                  *flags])
    if result.returncode != 0:
        fail("rewriting the rewritten sources changed them", result)

    result = run([args.mgb_rewrite, "--root", root, "--check", *args.sources, "--", *flags])
    if result.returncode != 1 or not re.search(r"\+\+\+ .*mgb-rewrite", result.stdout):
        fail("--check on the originals should exit 1 with a diff", result)


if __name__ == "__main__":
    main()
