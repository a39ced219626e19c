// The plan of one function body: its kernel launches and library calls, its memory operations,
// and the tasks they form. Planning fills it (TaskPlanner.h); ProbeWriter turns it into edits.
#ifndef MGB_REWRITER_PLANMODEL_H
#define MGB_REWRITER_PLANMODEL_H

#include "CudaApi.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/Stmt.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace mgb::rewriter {

// One kernel launch `k<<<grid, block[, shared[, stream]]>>>(args)`, or a host call into a CUDA
// library (cuSPARSE, cuBLAS, cub...) that takes device memory: it launches kernels on that memory
// inside the library, so it belongs to the task of that memory like a launch (no shape).
struct Launch {
  const clang::CUDAKernelCallExpr *call = nullptr;
  const clang::CallExpr *library = nullptr; // set instead of call for a library call
  const clang::CallExpr *expr() const { return call ? call : library; }
  const clang::Expr *grid = nullptr, *block = nullptr, *stream = nullptr; // stream: if explicit
  std::vector<const clang::VarDecl *> objects; // local device pointers it uses
  // Library calls: arguments that may be device memory not allocated in this function (a
  // parameter, a field, a view into an arena): bound and translated at the call, since a
  // stand-in must never reach the library.
  std::vector<const clang::Expr *> foreign;
  std::string lazyReason; // non-empty: this launch alone forces lazy
};

// A CUDA runtime call on device memory (allocation, copy, set, free).
struct MemOp {
  const clang::CallExpr *call = nullptr;
  OpKind kind = OpKind::Other;
  const clang::VarDecl *object = nullptr;       // the local pointer it allocates/uses, if traceable
  std::vector<const clang::Expr *> sizeFactors; // allocation size (product of factors)
};

// A merged task: static (probes) or lazy (mgb_prepare before each launch).
struct Task {
  bool isStatic = false;
  std::string lazyReason;
  std::vector<const Launch *> launches;
  std::set<const clang::VarDecl *> objects;
  std::vector<const MemOp *> ops;
  // Static placement: statements region->body()[first..last] are the task.
  const clang::CompoundStmt *region = nullptr;
  size_t first = 0, last = 0;
  bool untilFunctionEnd = false;                // memory not freed on every path
  std::vector<const clang::ReturnStmt *> exits; // returns inside the region (end goes before)
  bool endsAtScopeExit = false; // a return inside a macro body leaves it: a guard ends the task
  std::string sizeText, gridText, blockText, kernelText;
  // Frees moved up to the memory's last use (FreeHoisting.h): their text, written before the end
  // probe, and the statements that held them, disabled.
  std::vector<std::string> hoistedFrees;
  std::vector<const clang::Stmt *> disabledFrees;
  // The begin moved down past the task's first allocations to its memory's first use
  // (AllocationSinking.h): the pointers those allocations set, bound to the task at the begin.
  std::vector<const clang::VarDecl *> boundAtBegin;
  // Static tasks: library handles their library calls use that the region does not cover.
  std::vector<std::pair<clang::SourceLocation, std::string>> warnings; // where, what
};

struct FunctionPlan {
  std::string name;
  clang::SourceLocation location;
  bool alreadyRewritten = false; // holds mgb probes: left alone (idempotence)
  bool isMain = false;
  std::vector<Launch> launches;
  std::vector<MemOp> ops;
  std::vector<Task> tasks;
};

} // namespace mgb::rewriter

#endif // MGB_REWRITER_PLANMODEL_H
