// The host-side parse exists to get an AST, not to judge the program: nvcc or gcc judges it when it
// compiles the rewrite. Some clang errors therefore do not fail the parse (and never make a
// driver compile a source unrewritten):
//  - warnings clang makes errors by default (-Wc++11-narrowing, -Wreturn-mismatch...): the AST is
//    complete, and nvcc/gcc decide for themselves;
//  - any error raised while clang is inside a device-only function (__global__, or __device__
//    without __host__, lambdas inside them included): code the host compile never sees, where
//    clang and nvcc differ (`__shared__` with an initializer, narrowing in a kernel).
//  - a member declared without target attributes and defined out of line __device__ (nvcc's
//    warning #20039; clang finds no declaration for it), once the end of the parse confirms the
//    host declaration with the same type exists;
//  - the built-in variables (threadIdx, blockDim...) declared again at namespace scope with other
//    types than clang's own (`extern const dim3 blockDim;` for the host pass, as nvcc's host
//    compile declares them): the kernels keep clang's declarations;
//  - errors inside a template instantiation that only device-only functions reach (a
//    __host__ __device__ member of a class template called from a kernel, which nvcc's host
//    compile never instantiates), once the end of the parse confirms it.
// All are reported as warnings (and hidden by -w, as the drivers ask). Every other error (host
// code, namespace scope, the preprocessor) and every fatal error still fails it.
#ifndef MGB_REWRITER_HOSTPARSEDIAGNOSTICS_H
#define MGB_REWRITER_HOSTPARSEDIAGNOSTICS_H

#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Tooling/Tooling.h"

#include <memory>

namespace mgb::rewriter {

// Runs the matchers of finder over each translation unit, with the parse's diagnostics filtered
// as above.
std::unique_ptr<clang::tooling::FrontendActionFactory>
hostParseActionFactory(clang::ast_matchers::MatchFinder &finder);

} // namespace mgb::rewriter

#endif // MGB_REWRITER_HOSTPARSEDIAGNOSTICS_H
