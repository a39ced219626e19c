// Reports GPU work done through CUDA libraries (cuBLAS, cuFFT, cuRAND, cuSPARSE, cuSOLVER, cuDNN,
// NCCL, nvJPEG, NPP, cub): they launch their kernels and take their workspace inside the library,
// where mgb cannot see them. The program still builds and runs, but that work is not placed by
// mgbd and that memory is not reserved; the user is told where (thrust: ThrustUseReporter).
#ifndef MGB_REWRITER_LIBRARYCALLREPORTER_H
#define MGB_REWRITER_LIBRARYCALLREPORTER_H

#include "EditSet.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "llvm/Support/raw_ostream.h"

#include <set>
#include <string>

namespace mgb::rewriter {

class LibraryCallReporter : public clang::ast_matchers::MatchFinder::MatchCallback {
public:
  LibraryCallReporter(EditSet &edits, llvm::raw_ostream &warnings)
      : edits_(edits), warnings_(warnings) {}
  void registerMatchers(clang::ast_matchers::MatchFinder &finder);
  void run(const clang::ast_matchers::MatchFinder::MatchResult &result) override;

private:
  EditSet &edits_;
  llvm::raw_ostream &warnings_;
  std::set<std::string> reported_;
};

} // namespace mgb::rewriter

#endif // MGB_REWRITER_LIBRARYCALLREPORTER_H
