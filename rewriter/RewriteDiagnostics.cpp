#include "RewriteDiagnostics.h"

#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/DiagnosticIDs.h"
#include "clang/Basic/SourceManager.h"

namespace mgb::rewriter {

using namespace clang;

RewriteDiagnostics::RewriteDiagnostics(llvm::raw_ostream &out)
    : options_(new DiagnosticOptions()),
      printer_(std::make_unique<TextDiagnosticPrinter>(out, options_.get())) {}

RewriteDiagnostics::~RewriteDiagnostics() = default;

void RewriteDiagnostics::warn(SourceLocation at, const ASTContext &Ctx, llvm::StringRef message) {
  const SourceManager &SM = Ctx.getSourceManager();
  SourceLocation site = SM.getExpansionLoc(at);
  PresumedLoc p = SM.getPresumedLoc(site);
  std::string key = p.isInvalid()
                        ? std::string("unknown")
                        : std::string(p.getFilename()) + ":" + std::to_string(p.getLine()) + ":" +
                              std::to_string(p.getColumn());
  if (!seen_.insert(key + " " + message.str()).second)
    return;
  // An engine per report: each translation unit has its own SourceManager, and the unit's own
  // engine would apply its -w and -Werror to warnings about the rewrite, not the code.
  DiagnosticsEngine engine(new DiagnosticIDs(), options_.get(), printer_.get(),
                           /*ShouldOwnClient=*/false);
  engine.setSourceManager(const_cast<SourceManager *>(&SM));
  unsigned id = engine.getCustomDiagID(
      warningsAsErrors_ ? DiagnosticsEngine::Error : DiagnosticsEngine::Warning, "%0");
  printer_->BeginSourceFile(Ctx.getLangOpts(), /*PP=*/nullptr);
  engine.Report(site, id) << message;
  printer_->EndSourceFile();
}

} // namespace mgb::rewriter
