#include "HostParseDiagnostics.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/Attr.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/DiagnosticIDs.h"
#include "clang/Basic/DiagnosticSema.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Frontend/MultiplexConsumer.h"
#include "clang/Sema/Sema.h"

#include <set>

namespace mgb::rewriter {

using namespace clang;

namespace {

bool isDeviceOnly(const FunctionDecl *fd) {
  return fd && (fd->hasAttr<CUDAGlobalAttr>() ||
                (fd->hasAttr<CUDADeviceAttr>() && !fd->hasAttr<CUDAHostAttr>()));
}

// Out-of-line definitions clang found no declaration for, by the name's location: tolerated only
// while the end of the parse confirms each is nvcc's #20039 case (below).
using MismatchLocations = std::set<SourceLocation>;

// A member declared without target attributes and defined out of line __device__: nvcc warns
// (#20039) and makes it __host__ __device__; clang, for which the target is part of the
// signature, finds no matching declaration. Its body is device code, which the host compile never
// sees; the declaration the host calls is as written.
bool isDeviceDefinitionOfHostMember(const FunctionDecl *definition) {
  const auto *record = dyn_cast<CXXRecordDecl>(definition->getDeclContext());
  if (!record || !isDeviceOnly(definition))
    return false;
  for (const NamedDecl *found : record->lookup(definition->getDeclName())) {
    const auto *member = dyn_cast<FunctionDecl>(found->getUnderlyingDecl());
    if (const auto *tmpl = dyn_cast<FunctionTemplateDecl>(found))
      member = tmpl->getTemplatedDecl();
    if (member && member != definition && !member->isInvalidDecl() && !isDeviceOnly(member) &&
        !member->hasAttr<CUDAHostAttr>() &&
        definition->getASTContext().hasSameType(member->getType(), definition->getType()))
      return true;
  }
  return false;
}

// At the end of the parse: each tolerated mismatch must be such a definition, else it is the
// error it was (reported again as one, so the parse fails).
class MismatchConfirmer : public ASTConsumer, public RecursiveASTVisitor<MismatchConfirmer> {
public:
  MismatchConfirmer(CompilerInstance &ci, MismatchLocations &pending)
      : ci_(ci), pending_(pending) {}

  void HandleTranslationUnit(ASTContext &context) override {
    if (pending_.empty())
      return;
    TraverseDecl(context.getTranslationUnitDecl());
    DiagnosticsEngine &diags = ci_.getDiagnostics();
    unsigned id = diags.getCustomDiagID(DiagnosticsEngine::Error,
                                        "out-of-line definition does not match any declaration");
    for (SourceLocation loc : pending_)
      diags.Report(loc, id);
    pending_.clear();
  }

  bool VisitFunctionDecl(FunctionDecl *fd) {
    if (fd->isInvalidDecl() && pending_.count(fd->getLocation()) &&
        isDeviceDefinitionOfHostMember(fd))
      pending_.erase(fd->getLocation());
    return true;
  }

private:
  CompilerInstance &ci_;
  MismatchLocations &pending_;
};

// Wraps the parse's own consumer (the TextDiagnosticPrinter): tolerated errors reach it, and are
// counted, as warnings.
class HostParseDiagnostics : public DiagnosticConsumer {
public:
  HostParseDiagnostics(CompilerInstance &ci, DiagnosticConsumer *inner,
                       std::unique_ptr<DiagnosticConsumer> owned, MismatchLocations &mismatches)
      : ci_(ci), inner_(inner), owned_(std::move(owned)), mismatches_(mismatches) {}

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
    if (level == DiagnosticsEngine::Error && tolerated(info)) {
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

  bool tolerated(const Diagnostic &info) {
    unsigned id = info.getID();
    if (DiagnosticIDs::isBuiltinWarningOrExtension(id))
      return true; // a warning clang makes an error by default
    if (id == diag::err_member_decl_does_not_match) {
      mismatches_.insert(info.getLocation()); // confirmed, or reported again, at the end
      return true;
    }
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
  MismatchLocations &mismatches_;
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
    diags.setClient(new HostParseDiagnostics(ci, inner, std::move(owned), mismatches_),
                    /*ShouldOwnClient=*/true);
    return true;
  }
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &ci, llvm::StringRef) override {
    std::vector<std::unique_ptr<ASTConsumer>> consumers;
    consumers.push_back(std::make_unique<MismatchConfirmer>(ci, mismatches_));
    consumers.push_back(finder_.newASTConsumer());
    return std::make_unique<MultiplexConsumer>(std::move(consumers));
  }

private:
  ast_matchers::MatchFinder &finder_;
  MismatchLocations mismatches_;
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
