#include "HostParseDiagnostics.h"

#include "clang/AST/Attr.h"
#include "clang/Basic/DiagnosticIDs.h"
#include "clang/Basic/DiagnosticSema.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Sema/Sema.h"

namespace mgb::rewriter {

using namespace clang;

namespace {

bool isDeviceOnly(const FunctionDecl *fd) {
  return fd && (fd->hasAttr<CUDAGlobalAttr>() ||
                (fd->hasAttr<CUDADeviceAttr>() && !fd->hasAttr<CUDAHostAttr>()));
}

// Wraps the parse's own consumer (the TextDiagnosticPrinter): tolerated errors reach it, and are
// counted, as warnings.
class HostParseDiagnostics : public DiagnosticConsumer {
public:
  HostParseDiagnostics(CompilerInstance &ci, DiagnosticConsumer *inner,
                       std::unique_ptr<DiagnosticConsumer> owned)
      : ci_(ci), inner_(inner), owned_(std::move(owned)) {}

  void BeginSourceFile(const LangOptions &lang, const Preprocessor *pp) override {
    inner_->BeginSourceFile(lang, pp);
  }
  void EndSourceFile() override { inner_->EndSourceFile(); }
  void finish() override { inner_->finish(); }

  void HandleDiagnostic(DiagnosticsEngine::Level level, const Diagnostic &info) override {
    if (level == DiagnosticsEngine::Note) {
      if (!hidingNotes_)
        forward(level, info);
      return;
    }
    hidingNotes_ = false;
    if (level == DiagnosticsEngine::Error && tolerated(info.getID())) {
      level = DiagnosticsEngine::Warning;
      if (ci_.getDiagnostics().getIgnoreAllWarnings()) {
        hidingNotes_ = true;
        return;
      }
    }
    forward(level, info);
  }

private:
  void forward(DiagnosticsEngine::Level level, const Diagnostic &info) {
    DiagnosticConsumer::HandleDiagnostic(level, info); // the counts ExecuteAction's result reads
    inner_->HandleDiagnostic(level, info);
  }

  bool tolerated(unsigned id) const {
    if (DiagnosticIDs::isBuiltinWarningOrExtension(id))
      return true; // a warning clang makes an error by default
    // Rules nvcc does not enforce, whose AST clang builds as written: a default argument added
    // on an out-of-line member of a class template (SlabHash, round 12; clang keeps the default).
    if (id == diag::err_param_default_argument_member_template_redecl)
      return true;
    if (!ci_.hasSema())
      return false;
    const Sema &sema = ci_.getSema();
    return isDeviceOnly(sema.getCurFunctionDecl(/*AllowLambda=*/true)) ||
           isDeviceOnly(sema.getCurFunctionDecl(/*AllowLambda=*/false));
  }

  CompilerInstance &ci_;
  DiagnosticConsumer *inner_;
  std::unique_ptr<DiagnosticConsumer> owned_;
  bool hidingNotes_ = false;
};

class HostParseAction : public ASTFrontendAction {
public:
  explicit HostParseAction(ast_matchers::MatchFinder &finder) : finder_(finder) {}

protected:
  bool BeginSourceFileAction(CompilerInstance &ci) override {
    DiagnosticsEngine &diags = ci.getDiagnostics();
    std::unique_ptr<DiagnosticConsumer> owned = diags.ownsClient() ? diags.takeClient() : nullptr;
    DiagnosticConsumer *inner = owned ? owned.get() : diags.getClient();
    diags.setClient(new HostParseDiagnostics(ci, inner, std::move(owned)),
                    /*ShouldOwnClient=*/true);
    return true;
  }
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &, llvm::StringRef) override {
    return finder_.newASTConsumer();
  }

private:
  ast_matchers::MatchFinder &finder_;
};

class HostParseActionFactory : public tooling::FrontendActionFactory {
public:
  explicit HostParseActionFactory(ast_matchers::MatchFinder &finder) : finder_(finder) {}
  std::unique_ptr<FrontendAction> create() override {
    return std::make_unique<HostParseAction>(finder_);
  }

private:
  ast_matchers::MatchFinder &finder_;
};

} // namespace

std::unique_ptr<tooling::FrontendActionFactory>
hostParseActionFactory(ast_matchers::MatchFinder &finder) {
  return std::make_unique<HostParseActionFactory>(finder);
}

} // namespace mgb::rewriter
