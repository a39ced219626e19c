// mgb-rewrite: wraps the GPU tasks of CUDA sources in libmgb probes.
//   mgb-rewrite [options] FILES... -- COMPILER_FLAGS      or      mgb-rewrite -p BUILD_DIR FILES...
#include "FileChanges.h"
#include "MgbRewrite.h"
#include "SourceLocks.h"

#include "clang/Tooling/CommonOptionsParser.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <fstream>
#include <optional>

using namespace llvm;
using mgb::rewriter::FileResult;

namespace {

cl::OptionCategory category("mgb-rewrite options");

cl::opt<std::string> outputDir("o", cl::desc("Directory for rewritten files (default mgb-out)"),
                               cl::value_desc("dir"), cl::init("mgb-out"), cl::cat(category));
cl::opt<bool> inPlace("in-place", cl::desc("Rewrite files in place, keeping FILE.orig"),
                      cl::cat(category));
cl::opt<bool> check("check",
                    cl::desc("Exit 1 and print a diff when sources are not up to date with their "
                             "rewrite; write nothing"),
                    cl::cat(category));
cl::opt<bool> explain("explain", cl::desc("Print the tasks found in each function"),
                      cl::cat(category));
cl::opt<std::string> exportFixes(
    "export-fixes",
    cl::desc("Also write the changes as YAML replacements for clang-apply-replacements (with "
             "--check too)"),
    cl::value_desc("file.yaml"), cl::cat(category));
cl::opt<bool> warningsAsErrors(
    "warnings-as-errors",
    cl::desc("Report mgb-rewrite's warnings as errors: exit 1 and write nothing (for CI)"),
    cl::cat(category));
cl::opt<std::string> rootDir("root",
                             cl::desc("Only files under this directory are rewritten (default: "
                                      "the common directory of the sources)"),
                             cl::value_desc("dir"), cl::cat(category));

enum class LineNames { Default, Spelled, None };
cl::opt<LineNames> lineNames(
    "line-names",
    cl::desc("How the #line directives of a rewritten file name it, so that __FILE__ and the "
             "compiler's messages name the original (default: spelled, none with --in-place)"),
    cl::values(clEnumValN(LineNames::Spelled, "spelled",
                          "as the compile names it: a source as given here, a header as its "
                          "#include resolved"),
               clEnumValN(LineNames::None, "none",
                          "`#line N` only: the file keeps the name its compile gives it")),
    cl::init(LineNames::Default), cl::cat(category));

// Writes through a temporary file in the same directory and a rename: never half a file.
bool writeAtomically(const std::string &path, const std::string &text) {
  if (std::error_code ec = sys::fs::create_directories(sys::path::parent_path(path))) {
    errs() << "mgb-rewrite: cannot create directory for " << path << ": " << ec.message() << "\n";
    return false;
  }
  SmallString<256> temp;
  int fd = -1;
  if (std::error_code ec = sys::fs::createUniqueFile(path + ".tmp-%%%%%%", fd, temp)) {
    errs() << "mgb-rewrite: cannot write " << path << ": " << ec.message() << "\n";
    return false;
  }
  {
    raw_fd_ostream out(fd, /*shouldClose=*/true);
    out << text;
    out.flush();
    if (out.has_error()) {
      errs() << "mgb-rewrite: cannot write " << temp << ": " << out.error().message() << "\n";
      out.clear_error();
      sys::fs::remove(temp);
      return false;
    }
  }
  if (std::error_code ec = sys::fs::rename(temp, path)) {
    errs() << "mgb-rewrite: cannot rename " << temp << " to " << path << ": " << ec.message()
           << "\n";
    sys::fs::remove(temp);
    return false;
  }
  return true;
}

// The backup of an --in-place rewrite is the true original: written once, never replaced by a
// later run (which would back up an already rewritten file).
bool writeBackupOnce(const std::string &path, const std::string &original) {
  if (sys::fs::exists(path))
    return true;
  return writeAtomically(path, original);
}

// Clang and the rewriter's AST walks recurse once per nesting level: a 60,000-term expression on
// one line overflowed the default 8 MiB stack. The work runs on a thread with this much (reserved,
// not committed, until used), as clang's own driver gives its compiler thread a large stack.
constexpr unsigned kRewriteStackBytes = 1024u << 20;

std::string outputPath(const std::string &file, const std::string &root) {
  StringRef rel(file);
  if (!rel.consume_front(root + "/"))
    rel = sys::path::filename(file);
  SmallString<256> out(outputDir.getValue());
  sys::path::append(out, rel);
  return std::string(out);
}

} // namespace

int main(int argc, const char **argv) {
  InitLLVM initLLVM(argc, argv); // stack traces on crashes
  cl::SetVersionPrinter([](raw_ostream &os) { os << "mgb-rewrite " MGB_VERSION "\n"; });
  auto parser = clang::tooling::CommonOptionsParser::create(
      argc, argv, category, cl::OneOrMore,
      "Wraps the GPU tasks of CUDA sources in libmgb probes (see docs/rewriter.md).\n");
  if (!parser) {
    errs() << toString(parser.takeError());
    return 2;
  }
  if (inPlace && check) {
    errs() << "mgb-rewrite: --in-place and --check exclude each other\n";
    return 2;
  }
  if (inPlace && outputDir.getNumOccurrences() > 0) {
    errs() << "mgb-rewrite: --in-place and -o exclude each other\n";
    return 2;
  }
  std::vector<std::string> sources = parser->getSourcePathList();
  for (const std::string &s : sources)
    if (!sys::fs::exists(s)) {
      errs() << "mgb-rewrite: " << s << ": no such file\n";
      return 2;
    }
  std::string root = rootDir.empty() ? mgb::rewriter::commonRoot(sources)
                                     : mgb::rewriter::EditSet::canonicalPath(rootDir);
  // --in-place: each source is locked before it is read and until its rewrite is written.
  std::optional<mgb::rewriter::SourceLocks> locks;
  if (inPlace) {
    Expected<mgb::rewriter::SourceLocks> acquired = mgb::rewriter::SourceLocks::acquire(sources);
    if (!acquired) {
      errs() << "mgb-rewrite: " << toString(acquired.takeError()) << "\n";
      return 1;
    }
    locks.emplace(std::move(*acquired));
  }
  mgb::rewriter::RewriteSession session(root, vfs::getRealFileSystem());
  session.diagnostics().setWarningsAsErrors(warningsAsErrors);
  session.setSpelledLineNames(lineNames == LineNames::Spelled ||
                              (lineNames == LineNames::Default && !inPlace));
  int status = 0;
  std::optional<Expected<std::vector<FileResult>>> computed;
  CrashRecoveryContext::Enable();
  CrashRecoveryContext recovery;
  const bool finished = recovery.RunSafelyOnThread(
      [&] {
        status = session.run(parser->getCompilations(), sources);
        if (status == 0)
          computed.emplace(session.results(sources));
      },
      kRewriteStackBytes);
  if (!finished) {
    errs() << "mgb-rewrite: crashed while rewriting";
    for (const std::string &s : sources)
      errs() << " " << s;
    errs() << "; nothing was written (a bug in mgb-rewrite or Clang: please report it with the "
              "file)\n";
    return 70;
  }
  if (status != 0) {
    errs() << "mgb-rewrite: not rewritten: a source did not parse (diagnostics above)\n";
    return 1;
  }
  errs() << session.warnings();
  if (explain)
    outs() << session.explanation();
  if (warningsAsErrors && session.diagnostics().count() > 0) {
    errs() << "mgb-rewrite: not rewritten: " << session.diagnostics().count()
           << " warning(s) treated as errors (--warnings-as-errors)\n";
    return 1;
  }
  Expected<std::vector<FileResult>> &results = *computed;
  if (!results) {
    errs() << "mgb-rewrite: " << toString(results.takeError()) << "\n";
    return 1;
  }
  if (!exportFixes.empty() &&
      !writeAtomically(exportFixes,
                       mgb::rewriter::fixesYaml(
                           *results, mgb::rewriter::EditSet::canonicalPath(sources.front()))))
    return 1;
  if (check) {
    bool stale = false;
    for (const FileResult &r : *results)
      if (r.rewritten != r.original) {
        mgb::rewriter::printUnifiedDiff(r, outs());
        stale = true;
      }
    return stale ? 1 : 0;
  }
  for (const FileResult &r : *results) {
    if (inPlace) {
      if (r.rewritten == r.original)
        continue;
      if (!writeBackupOnce(r.path + ".orig", r.original) || !writeAtomically(r.path, r.rewritten))
        return 1;
    } else if (!writeAtomically(outputPath(r.path, root), r.copy)) {
      return 1;
    }
  }
  return 0;
}
