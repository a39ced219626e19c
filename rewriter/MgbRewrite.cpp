#include "MgbRewrite.h"

#include "ApiCallRenamer.h"
#include "CudaStructPointerWriter.h"
#include "CudaApi.h"
#include "ForeignStreamWrapper.h"
#include "FunctionTaskCallback.h"
#include "HostParseDiagnostics.h"
#include "LaunchSpacingFS.h"
#include "ToolkitHeaderFS.h"
#include "ThrustUseReporter.h"
#include "UnmanagedLaunchReporter.h"

#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Tooling/Core/Replacement.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"

#include <optional>

#ifndef MGB_SHIM_DIR
#error "MGB_SHIM_DIR must point at rewriter/shim"
#endif
#ifndef MGB_CLANG_RESOURCE_DIR
#error "MGB_CLANG_RESOURCE_DIR must be clang-19's resource directory"
#endif
#ifndef MGB_RUNTIME_INCLUDE
#error "MGB_RUNTIME_INCLUDE must point at runtime/include"
#endif
#ifndef MGB_CUDA_PATH
#define MGB_CUDA_PATH "/usr/local/cuda"
#endif
#ifndef MGB_HOST_GCC_INCLUDE
#define MGB_HOST_GCC_INCLUDE ""
#endif

namespace mgb::rewriter {

using namespace clang;

namespace {

// Host C/C++ compilers (mgb-cc/mgb-c++ and the compilers of a compile_commands.json), whose
// sources are not CUDA unless they say so: `gcc`, `x86_64-linux-gnu-g++-12`, `clang++`, `cc`.
bool isHostCompiler(llvm::StringRef driver) {
  llvm::StringRef name = llvm::sys::path::filename(driver);
  static const llvm::Regex host(
      "^(.*-)?(cc|c\\+\\+|gcc|g\\+\\+|clang|clang\\+\\+|mgb-cc|mgb-c\\+\\+)(-[0-9.]+)?$");
  return host.match(name);
}

// Hands a source to the parse under the name it was given by (FixedCompilationDatabase appends
// the absolute path ClangTool made of it), so that clang's names of the source and of the headers
// it includes relative to itself are the compiler's (`src/main.cu`, `src/util.h`). Commands of a
// compile_commands.json already name the file as the build did and are left alone.
class GivenNameDatabase : public tooling::CompilationDatabase {
public:
  GivenNameDatabase(const tooling::CompilationDatabase &inner,
                    const std::map<std::string, std::string> &given)
      : inner_(inner), given_(given) {}
  std::vector<tooling::CompileCommand> getCompileCommands(llvm::StringRef file) const override {
    std::vector<tooling::CompileCommand> commands = inner_.getCompileCommands(file);
    auto it = given_.find(EditSet::canonicalPath(file));
    if (it == given_.end())
      return commands;
    for (tooling::CompileCommand &c : commands)
      if (!c.CommandLine.empty() && c.CommandLine.back() == file && c.Filename == file) {
        c.CommandLine.back() = it->second;
        c.Filename = it->second;
      }
    return commands;
  }
  std::vector<std::string> getAllFiles() const override { return inner_.getAllFiles(); }
  std::vector<tooling::CompileCommand> getAllCompileCommands() const override {
    return inner_.getAllCompileCommands();
  }

private:
  const tooling::CompilationDatabase &inner_;
  const std::map<std::string, std::string> &given_;
};

} // namespace

ParseLanguage languageOf(const std::vector<std::string> &args, llvm::StringRef file) {
  // An explicit -x (the last one before the file) decides, as it does for the compilers.
  std::optional<ParseLanguage> x;
  for (size_t i = 0; i < args.size(); ++i) {
    llvm::StringRef a = args[i], value;
    if (a == "-x" || a == "--x") {
      if (i + 1 < args.size())
        value = args[++i];
    } else if (a.starts_with("-x") && a.size() > 2) {
      value = a.drop_front(2).ltrim('=');
    } else if (a.starts_with("--x=")) {
      value = a.drop_front(4);
    } else {
      if (!a.starts_with("-") && !file.empty() && a == file)
        break;
      continue;
    }
    if (value == "c" || value == "c-header")
      x = ParseLanguage::C;
    else if (value == "c++" || value == "c++-header")
      x = ParseLanguage::CXX;
    else if (value == "cuda" || value == "cu")
      x = ParseLanguage::Cuda;
    else if (value == "none")
      x.reset();
  }
  if (x)
    return *x;
  // A host compiler's command line (compile_commands.json): the language of the extension, as
  // gcc/g++ pick it (g++ compiles .c as C++). Anything else (nvcc, `--`): CUDA.
  if (!args.empty() && isHostCompiler(args.front())) {
    llvm::StringRef ext = llvm::sys::path::extension(file);
    if (ext == ".cu")
      return ParseLanguage::Cuda;
    llvm::StringRef driver = llvm::sys::path::filename(args.front());
    bool cxxDriver = driver.contains("++");
    if (ext == ".c" && !cxxDriver)
      return ParseLanguage::C;
    return ParseLanguage::CXX;
  }
  return ParseLanguage::Cuda;
}

std::vector<std::string> parseArguments(ParseLanguage language) {
  std::vector<std::string> args;
  if (language == ParseLanguage::Cuda) {
    args = {"-x", "cuda", "--cuda-host-only", "--cuda-path=" MGB_CUDA_PATH, "-nocudalib",
            "-Wno-unknown-cuda-version", "-resource-dir=" MGB_CLANG_RESOURCE_DIR,
            // Tolerated errors (HostParseDiagnostics) must not stop the parse at 20.
            "-ferror-limit=0", "--cuda-gpu-arch=sm_90", "-isystem", MGB_SHIM_DIR,
            // CUDA 13 keeps libcu++/thrust/cub here (nvcc adds it itself); cooperative_groups.h
            // and thrust need it.
            "-isystem", MGB_CUDA_PATH "/include/cccl",
            // Declares runtime functions CUDA 12/13 removed that older programs still call.
            "-include", MGB_SHIM_DIR "/mgb_removed_cuda_api.h",
            // Host min()/max() overloads nvcc has and clang's CUDA wrapper makes device-only.
            "-include", MGB_SHIM_DIR "/mgb_host_math.h",
            // Intrinsics (__ldcs, __stcs, surf2Dwrite...) and macros (__CUDACC_VER_MAJOR__)
            // nvcc has and clang 19 lacks.
            "-include", MGB_SHIM_DIR "/mgb_cuda_intrinsics.h",
            // C headers nvcc's implicit cuda_runtime.h includes (time(), memcpy()...).
            "-include", MGB_SHIM_DIR "/mgb_nvcc_implicit.h"};
  } else {
    // A host source that calls the CUDA runtime (darknet's cuda.c), compiled by gcc/g++ with
    // the toolkit's include directory: parsed as that language, not as CUDA.
    args = {"-x",
            language == ParseLanguage::C ? "c" : "c++",
            "-resource-dir=" MGB_CLANG_RESOURCE_DIR,
            "-ferror-limit=0",
            "-isystem",
            MGB_SHIM_DIR,
            "-isystem",
            MGB_CUDA_PATH "/include",
            "-isystem",
            MGB_CUDA_PATH "/include/cccl",
            "-include",
            MGB_SHIM_DIR "/mgb_removed_cuda_api.h"};
  }
  // Rewritten sources include <mgb/mgb.h>: rewriting them again must parse.
  args.push_back("-idirafter");
  args.push_back(MGB_RUNTIME_INCLUDE);
  // nvcc's host GCC finds omp.h (cuda-samples UnifiedMemoryStreams, cudaOpenMP) in its own
  // include directory, which clang does not search; last, so clang's builtin headers still win.
  if (*MGB_HOST_GCC_INCLUDE) {
    args.push_back("-idirafter");
    args.push_back(MGB_HOST_GCC_INCLUDE);
  }
  return args;
}

std::vector<std::string> cudaParseArguments() { return parseArguments(ParseLanguage::Cuda); }

tooling::ArgumentsAdjuster cudaArgumentsAdjuster() {
  return [](const tooling::CommandLineArguments &args, llvm::StringRef file) {
    tooling::CommandLineArguments out;
    if (args.empty())
      return out;
    out.push_back(args.front());
    for (const std::string &flag : parseArguments(languageOf(args, file)))
      out.push_back(flag);
    static const char *withValue[] = {"-I",       "-D",      "-U",         "-isystem",
                                      "-include", "-iquote", "-idirafter", "-imacros"};
    static const char *sourceExts[] = {".cu", ".cpp", ".cc", ".cxx", ".c", ".C"};
    for (size_t i = 1; i < args.size(); ++i) {
      llvm::StringRef a = args[i];
      bool kept = false;
      for (const char *prefix : withValue)
        if (a == prefix && i + 1 < args.size()) {
          out.push_back(args[i]);
          out.push_back(args[++i]);
          kept = true;
          break;
        } else if (a.starts_with(prefix) && a != prefix) {
          out.push_back(args[i]);
          kept = true;
          break;
        }
      if (kept)
        continue;
      if (a == "-x" || a == "--x") {
        ++i; // the language was chosen above
      } else if (a.starts_with("-std=") || a.starts_with("--std=")) {
        out.push_back(("-std=" + a.split('=').second).str());
      } else if (a.starts_with("-Werror") || a == "-pedantic-errors") {
        // The compiler's warnings are not clang's: a warning must not make the parse fail.
      } else if (a == "-fsyntax-only" || a.starts_with("-W") || a == "-w") {
        out.push_back(args[i]);
      } else if (!a.starts_with("-")) {
        for (const char *ext : sourceExts)
          if (a.ends_with(ext)) {
            out.push_back(args[i]);
            break;
          }
      }
    }
    return out;
  };
}

std::string commonRoot(const std::vector<std::string> &files) {
  std::string root;
  for (const std::string &f : files) {
    std::string dir = llvm::sys::path::parent_path(EditSet::canonicalPath(f)).str();
    if (root.empty()) {
      root = dir;
      continue;
    }
    while (!root.empty() && !(llvm::StringRef(dir + "/").starts_with(root + "/")))
      root = llvm::sys::path::parent_path(root).str();
  }
  return root.empty() ? "/" : root;
}

std::string insertInclude(llvm::StringRef content, const std::set<std::string> &fallbacks,
                          bool unseen, const LineName &lineName) {
  std::string block;
  static const llvm::Regex included("^[ \t]*#[ \t]*include[ \t]*<mgb/mgb\\.h>",
                                    llvm::Regex::Newline);
  static const llvm::Regex unseenIncluded("^[ \t]*#[ \t]*include[ \t]*<mgb/unseen_tu\\.h>",
                                          llvm::Regex::Newline);
  if (!included.match(content))
    block += "#include <cuda_runtime.h>\n#include <mgb/mgb.h>\n";
  for (const std::string &name : fallbacks) {
    std::string def = "#define " + name + " " + replacementName(name) + "\n";
    if (!content.starts_with(def) && !content.contains("\n" + def))
      block += "/* mgb: " + name +
               " is called where mgb-rewrite does not edit it (a macro, a macro's argument, or a "
               "header outside --root) */\n" +
               def;
  }
  if (unseen && !unseenIncluded.match(content))
    block += "/* mgb: this file holds code mgb-rewrite could not route (see its warnings), or "
             "includes a library that takes device memory itself: the program binds its memory "
             "eagerly */\n#include <mgb/unseen_tu.h>\n";
  if (block.empty())
    return content.str();
  // After a byte order mark (the compiler reads it only as the file's first bytes) and the leading
  // comments (license, file description), before the first line of code.
  size_t pos = afterByteOrderMark(content);
  for (;;) {
    size_t next = content.find_first_not_of(" \t\r\n", pos);
    if (next == llvm::StringRef::npos)
      break;
    if (content.substr(next).starts_with("//")) {
      pos = content.find('\n', next);
      pos = pos == llvm::StringRef::npos ? content.size() : pos + 1;
    } else if (content.substr(next).starts_with("/*")) {
      size_t close = content.find("*/", next + 2);
      if (close == llvm::StringRef::npos)
        break;
      pos = content.find('\n', close);
      pos = pos == llvm::StringRef::npos ? content.size() : pos + 1;
    } else {
      size_t nl = content.rfind('\n', next);
      pos = nl == llvm::StringRef::npos || nl < pos ? pos : nl + 1;
      break;
    }
  }
  if (pos > afterByteOrderMark(content) && content[pos - 1] != '\n') // the block starts a line
    block.insert(0, "\n");
  unsigned nextLine = 1 + static_cast<unsigned>(content.take_front(pos).count('\n'));
  block += lineDirective(nextLine, lineName);
  return (content.substr(0, pos) + block + content.substr(pos)).str();
}

RewriteSession::RewriteSession(std::string root, llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> fs)
    : explainStream_(explain_), warningStream_(warnings_), diagnostics_(warningStream_),
      edits_(std::move(root)), fs_(std::move(fs)),
      renamer_(std::make_unique<ApiCallRenamer>(edits_, diagnostics_)),
      tasks_(std::make_unique<FunctionTaskCallback>(edits_, explainStream_, diagnostics_)),
      unmanaged_(std::make_unique<UnmanagedLaunchReporter>(edits_, diagnostics_)),
      thrust_(std::make_unique<ThrustUseReporter>(edits_, diagnostics_)),
      streams_(std::make_unique<ForeignStreamWrapper>(edits_)),
      structs_(std::make_unique<CudaStructPointerWriter>(edits_)) {
  renamer_->registerMatchers(finder_);
  tasks_->registerMatchers(finder_);
  unmanaged_->registerMatchers(finder_);
  thrust_->registerMatchers(finder_);
  streams_->registerMatchers(finder_);
  structs_->registerMatchers(finder_);
}

RewriteSession::~RewriteSession() = default;

int RewriteSession::run(const tooling::CompilationDatabase &db,
                        const std::vector<std::string> &sources) {
  for (const std::string &s : sources)
    givenNames_.emplace(EditSet::canonicalPath(s), s);
  GivenNameDatabase named(db, givenNames_);
  std::unique_ptr<tooling::FrontendActionFactory> action = hostParseActionFactory(finder_);
  // One tool per source: ClangTool prints "[1/2] Processing file ..." for several.
  int status = 0;
  for (const std::string &s : sources) {
    tooling::ClangTool tool(
        named, {s}, std::make_shared<PCHContainerOperations>(),
        makeLaunchSpacingFS(makeToolkitHeaderFS(fs_, MGB_CUDA_PATH "/include")));
    tool.appendArgumentsAdjuster(cudaArgumentsAdjuster());
    status = std::max(status, tool.run(action.get()));
  }
  return status;
}

llvm::Expected<std::vector<FileResult>>
RewriteSession::results(const std::vector<std::string> &sources) {
  std::vector<std::string> files;
  for (const std::string &s : sources)
    files.push_back(EditSet::canonicalPath(s));
  for (const std::string &f : edits_.files())
    if (std::find(files.begin(), files.end(), f) == files.end())
      files.push_back(f);
  for (const auto &[f, names] : edits_.allMacroFallbacks())
    if (std::find(files.begin(), files.end(), f) == files.end())
      files.push_back(f);
  for (const std::string &f : edits_.filesWithUnseenCode())
    if (std::find(files.begin(), files.end(), f) == files.end())
      files.push_back(f);
  std::vector<FileResult> out;
  for (const std::string &f : files) {
    auto buffer = fs_->getBufferForFile(f);
    if (!buffer)
      return llvm::createStringError(buffer.getError(), "cannot read %s", f.c_str());
    FileResult r{f, (*buffer)->getBuffer().str(), "", ""};
    llvm::Expected<tooling::Replacements> reps = edits_.replacementsFor(f);
    if (!reps)
      return reps.takeError();
    LineName name = lineName(f);
    // The edits' offsets are those of the text clang parsed (LaunchSpacingFS.h).
    llvm::Expected<std::string> applied =
        applyKeepingLines(typeBracedLaunchConfigs(r.original), *reps, name);
    if (!applied)
      return applied.takeError();
    bool unseen = edits_.holdsUnseenCode(f);
    bool changed = *applied != r.original || edits_.allMacroFallbacks().count(f) || unseen;
    r.rewritten =
        changed ? insertInclude(*applied, edits_.macroFallbacks(f), unseen, name) : *applied;
    r.copy = changed ? r.rewritten : namedCopy(r.original, name);
    out.push_back(std::move(r));
  }
  return out;
}

LineName RewriteSession::lineName(const std::string &file) const {
  if (!spelledLineNames_)
    return std::nullopt;
  std::string spelled = edits_.spelling(file);
  if (spelled.empty()) {
    auto it = givenNames_.find(file);
    spelled = it == givenNames_.end() ? file : it->second;
  }
  return spelled;
}

llvm::Expected<std::string> rewriteCode(llvm::StringRef code, llvm::StringRef fileName,
                                        std::string *explain,
                                        const std::vector<std::string> &flags) {
  auto memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  auto overlay =
      llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(llvm::vfs::getRealFileSystem());
  overlay->pushOverlay(memory);
  std::string path = ("/mgb-test/" + fileName).str();
  memory->addFile(path, 0, llvm::MemoryBuffer::getMemBufferCopy(code));
  tooling::FixedCompilationDatabase db("/", flags);
  RewriteSession session("/mgb-test", overlay);
  if (session.run(db, {path}) != 0)
    return llvm::createStringError(std::errc::invalid_argument, "%s does not parse", path.c_str());
  if (explain)
    *explain = session.explanation();
  llvm::Expected<std::vector<FileResult>> results = session.results({path});
  if (!results)
    return results.takeError();
  return results->front().rewritten;
}

} // namespace mgb::rewriter
