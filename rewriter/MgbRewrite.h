// mgb-rewrite as a library: run the rewrite over translation units and get the new file texts.
// The tool (tool/MgbRewriteMain.cpp) only parses options and writes files.
#ifndef MGB_REWRITER_MGBREWRITE_H
#define MGB_REWRITER_MGBREWRITE_H

#include "EditSet.h"
#include "LineKeeping.h"
#include "RewriteDiagnostics.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/Tooling/ArgumentsAdjusters.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "clang/Tooling/Tooling.h"

#include <memory>
#include <string>
#include <vector>

namespace mgb::rewriter {

class ApiCallRenamer;
class FunctionTaskCallback;
class UnmanagedLaunchReporter;
class ThrustUseReporter;
class ForeignStreamWrapper;
class CudaStructPointerWriter;

struct FileResult {
  std::string path;      // canonical path of the original
  std::string original;  // text before
  std::string rewritten; // text after (== original when nothing changed)
  // What -o writes: `rewritten`, or for a file nothing changed the original under a `#line 1`
  // that names it (spelled line names only): compiled from the copy, __FILE__ and the compiler's
  // messages still name the original.
  std::string copy;
};

// How a source is parsed: CUDA (host side), or a host C/C++ file that calls the CUDA runtime.
enum class ParseLanguage { Cuda, C, CXX };

// The language of `file` on a compiler command line (args.front() is the compiler): the last
// `-x c|c++|cuda|cu` before it; else, for a host compiler (gcc, g++, cc, c++, clang, mgb-cc...),
// its extension (.c is C++ for a C++ driver, as g++ compiles it); else CUDA.
ParseLanguage languageOf(const std::vector<std::string> &args, llvm::StringRef file);

// The flags clang 19 needs to parse a source of that language (CUDA 13 host side: shim, resource
// dir, CUDA path; C/C++: the toolkit's include directory), and an adjuster that keeps only the
// preprocessor/language flags of a compiler command line and adds those for its language.
std::vector<std::string> parseArguments(ParseLanguage language);
std::vector<std::string> cudaParseArguments(); // parseArguments(ParseLanguage::Cuda)
clang::tooling::ArgumentsAdjuster cudaArgumentsAdjuster();

// The deepest directory holding every file (the default --root).
std::string commonRoot(const std::vector<std::string> &files);

// `#include <mgb/mgb.h>` (once), the macro fallbacks and, for a file holding code mgb cannot
// see, `#include <mgb/unseen_tu.h>` (once) near the top of a rewritten file (after a byte order
// mark and the leading comments), ended by a #line that gives the next line its original number
// (and name).
std::string insertInclude(llvm::StringRef content, const std::set<std::string> &fallbacks,
                          bool unseen = false, const LineName &name = std::nullopt);

class RewriteSession {
public:
  // root: files under it may be rewritten. fs: what sources are read from (the real file system
  // unless a test supplies one).
  RewriteSession(std::string root, llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> fs);
  ~RewriteSession();

  // How #line directives name a rewritten file: by the spelling the parse knew it by (a source as
  // given, a header as its #include resolved), or not at all (`#line N`, for --in-place).
  void setSpelledLineNames(bool spelled) { spelledLineNames_ = spelled; }

  // Runs over the sources (one parse each); returns the tool's status (non-zero: a source did not
  // parse). A source given by a relative path is parsed under that name, as the compiler sees it.
  int run(const clang::tooling::CompilationDatabase &db, const std::vector<std::string> &sources);

  // Every source and every edited header, with its rewritten text.
  llvm::Expected<std::vector<FileResult>> results(const std::vector<std::string> &sources);

  const std::string &explanation() const { return explain_; }
  // The rewrite's own warnings (or errors, with warningsAsErrors), printed as Clang does.
  const std::string &warnings() const { return warnings_; }
  RewriteDiagnostics &diagnostics() { return diagnostics_; }

private:
  LineName lineName(const std::string &file) const;

  bool spelledLineNames_ = true;
  std::map<std::string, std::string> givenNames_; // canonical path -> as given to run()
  std::string explain_, warnings_;
  llvm::raw_string_ostream explainStream_, warningStream_;
  RewriteDiagnostics diagnostics_;
  EditSet edits_;
  llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> fs_;
  clang::ast_matchers::MatchFinder finder_;
  std::unique_ptr<ApiCallRenamer> renamer_;
  std::unique_ptr<FunctionTaskCallback> tasks_;
  std::unique_ptr<UnmanagedLaunchReporter> unmanaged_;
  std::unique_ptr<ThrustUseReporter> thrust_;
  std::unique_ptr<ForeignStreamWrapper> streams_;
  std::unique_ptr<CudaStructPointerWriter> structs_;
};

// Rewrites one in-memory source (unit tests). Parse errors come back as an error. flags: as after
// `--` on mgb-rewrite's command line (e.g. {"-x", "c"}).
llvm::Expected<std::string> rewriteCode(llvm::StringRef code, llvm::StringRef fileName = "input.cu",
                                        std::string *explain = nullptr,
                                        const std::vector<std::string> &flags = {});

} // namespace mgb::rewriter

#endif // MGB_REWRITER_MGBREWRITE_H
