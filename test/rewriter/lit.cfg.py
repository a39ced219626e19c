# lit configuration of the rewriter's golden tests (clang-tools-extra's layout). CMake writes a
# lit.site.cfg.py (from lit.site.cfg.py.in) into the build tree for each suite: build/test/rewriter
# runs test/rewriter/inputs, build/test/rewriter/patterns runs examples/patterns. Each test is one
# source whose RUN lines rewrite it and FileCheck the result; see docs/rewriter.md, "Tests".
#   python3 /usr/lib/llvm-19/build/utils/lit/lit.py -sv build/test/rewriter/inputs/late_shape.cu
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

if not hasattr(config, "mgb_rewrite"):
    lit_config.fatal(
        "run lit on the build tree (build/test/rewriter/...), whose lit.site.cfg.py CMake writes"
    )

config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".cu", ".c"]
# Sources that are not tests of their own: parse_error.cu is rewriter.parse_error's input
# (CMakeLists.txt), buffers.cu the second translation unit of patterns/multi_tu.cu, and the
# projects beside inputs/ (and driver_identity/) belong to the mgb-nvcc/mgb-cc tests.
config.excludes = [
    "parse_error.cu",
    "buffers.cu",
    "makefile_project",
    "cmake_project",
    "fallback",
    "driver_identity",
    "whole_program",
]

llvm_config.add_tool_substitutions(
    [ToolSubst("FileCheck", command=config.filecheck, unresolved="fatal")],
    [config.llvm_tools_dir],
)
config.substitutions.append(("%mgb-rewrite", config.mgb_rewrite))
config.substitutions.append(("%nvcc", config.nvcc))
config.substitutions.append(("%runtime-include", config.runtime_include))
config.substitutions.append(("%gcc", config.gcc))
config.substitutions.append(("%gxx", config.gxx))
# The rewrite keeps comments: FileCheck reads it without its CHECK comment lines, which would
# otherwise match themselves. %strip-checks also drops the #line directives that keep the
# original's line numbers (the tests check the code; source_identity, byte_order_mark and
# device_diagnostics check the directives, through %strip-check-comments, which keeps them).
config.substitutions.append(
    (
        "%strip-check-comments",
        "grep -a -v -E '^[[:blank:]]*//[[:blank:]]*CHECK'",
    )
)
config.substitutions.append(
    (
        "%strip-checks",
        "grep -a -v -E '^[[:blank:]]*//[[:blank:]]*CHECK|^#line [0-9]+'",
    )
)
# %golden [--host-compiler %gcc] OUT SOURCE... [-- FLAG...]: nvcc -c (or the host compiler) on
# each rewritten source in OUT/first, idempotence, --check on the originals (golden.py).
config.substitutions.append(
    (
        "%golden",
        '"%s" "%s" --mgb-rewrite "%s" --nvcc "%s" --include "%s" --cuda-include "%s"'
        % (
            config.python_executable,
            os.path.join(os.path.dirname(__file__), "golden.py"),
            config.mgb_rewrite,
            config.nvcc,
            config.runtime_include,
            config.cuda_include,
        ),
    )
)
