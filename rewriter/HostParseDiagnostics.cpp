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
#include <string>
#include <vector>

namespace mgb::rewriter {

using namespace clang;

namespace {

// Whether fd's body holds loc (by where they were written, macros expanded).
bool bodyHolds(const SourceManager &sm, const FunctionDecl *fd, SourceLocation loc) {
  SourceRange body = fd->getBody()->getSourceRange();
  SourceLocation at = sm.getExpansionLoc(loc);
  return !sm.isBeforeInTranslationUnit(at, sm.getExpansionLoc(body.getBegin())) &&
         !sm.isBeforeInTranslationUnit(sm.getExpansionRange(body.getEnd()).getEnd(), at);
}

bool isDeviceOnly(const FunctionDecl *fd) {
  return fd && (fd->hasAttr<CUDAGlobalAttr>() ||
                (fd->hasAttr<CUDADeviceAttr>() && !fd->hasAttr<CUDAHostAttr>()));
}

// Errors tolerated for now, each confirmed at the end of the parse or reported again as an error:
//  - out-of-line definitions clang found no declaration for (by the name's location): nvcc's
//    #20039 case (isDeviceDefinitionOfHostMember);
//  - errors inside a template instantiation (by the outermost point of instantiation): code that
//    only device-only functions instantiate (a __host__ __device__ member called from a kernel),
//    which nvcc's host compile never instantiates; EDG accepts what clang rejects there (a member
//    of a dependent base called unqualified: cudaKDTree, round 15).
struct ProvisionalError {
  SourceLocation at;
  std::string message;  // clang's, reported again as it was if not confirmed
  SourceLocation point; // an instantiation's outermost point of instantiation
};
struct ProvisionalErrors {
  std::vector<ProvisionalError> mismatches, instantiations;
  bool empty() const { return mismatches.empty() && instantiations.empty(); }
};

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

// At the end of the parse: confirms each provisional error, or reports it again as an error (so
// the parse fails).
class ProvisionalErrorConfirmer : public ASTConsumer,
                                  public RecursiveASTVisitor<ProvisionalErrorConfirmer> {
public:
  ProvisionalErrorConfirmer(CompilerInstance &ci, ProvisionalErrors &pending)
      : ci_(ci), pending_(pending) {}

  bool shouldVisitTemplateInstantiations() const { return true; }

  void HandleTranslationUnit(ASTContext &context) override {
    if (pending_.empty())
      return;
    TraverseDecl(context.getTranslationUnitDecl());
    DiagnosticsEngine &diags = ci_.getDiagnostics();
    unsigned error = diags.getCustomDiagID(DiagnosticsEngine::Error, "%0");
    for (const ProvisionalError &e : pending_.mismatches)
      if (!confirmedMismatches_.count(e.at))
        diags.Report(e.at, error) << e.message;
    for (const ProvisionalError &e : pending_.instantiations)
      if (!onlyDeviceCodeReaches(e.point, 0))
        diags.Report(e.at, error) << e.message;
    pending_ = {};
  }

  bool VisitFunctionDecl(FunctionDecl *fd) {
    if (fd->isInvalidDecl() && isDeviceDefinitionOfHostMember(fd))
      confirmedMismatches_.insert(fd->getLocation());
    if (!pending_.instantiations.empty() && fd->doesThisDeclarationHaveABody() && fd->getBody())
      bodies_.push_back(fd);
    return true;
  }

private:
  // Whether code at loc runs on the device only: a device-only function's body holds it, or every
  // function whose body holds it is an instantiation that only device code reaches (through its
  // own point of instantiation).
  bool onlyDeviceCodeReaches(SourceLocation loc, int depth) const {
    if (loc.isInvalid() || depth > 16)
      return false;
    const SourceManager &sm = ci_.getSourceManager();
    std::vector<const FunctionDecl *> holders;
    for (const FunctionDecl *fd : bodies_)
      if (bodyHolds(sm, fd, loc)) {
        if (isDeviceOnly(fd))
          return true; // a kernel, or a lambda inside one
        if (!fd->isDependentContext())
          holders.push_back(fd);
      }
    for (const FunctionDecl *fd : holders)
      if (!isTemplateInstantiation(fd->getTemplateSpecializationKind()) ||
          !onlyDeviceCodeReaches(fd->getPointOfInstantiation(), depth + 1))
        return false;
    return !holders.empty();
  }

  CompilerInstance &ci_;
  ProvisionalErrors &pending_;
  std::vector<const FunctionDecl *> bodies_;
  std::set<SourceLocation> confirmedMismatches_;
};

std::string messageOf(const Diagnostic &info) {
  llvm::SmallString<128> text;
  info.FormatDiagnostic(text);
  return std::string(text);
}

// Wraps the parse's own consumer (the TextDiagnosticPrinter): tolerated errors reach it, and are
// counted, as warnings.
class HostParseDiagnostics : public DiagnosticConsumer {
public:
  HostParseDiagnostics(CompilerInstance &ci, DiagnosticConsumer *inner,
                       std::unique_ptr<DiagnosticConsumer> owned, ProvisionalErrors &provisional)
      : ci_(ci), inner_(inner), owned_(std::move(owned)), provisional_(provisional) {}

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
      provisional_.mismatches.push_back({info.getLocation(), messageOf(info), {}});
      return true;
    }
    // Rules nvcc does not enforce, whose AST clang builds as written: a default argument added
    // on an out-of-line member of a class template (SlabHash, round 12; clang keeps the default).
    if (id == diag::err_param_default_argument_member_template_redecl)
      return true;
    if (!ci_.hasSema())
      return false;
    if ((id == diag::err_redeclaration_different_type ||
         id == diag::err_redefinition_different_type) &&
        redeclaresBuiltinVariable(info))
      return true;
    const Sema &sema = ci_.getSema();
    if (isDeviceOnly(sema.getCurFunctionDecl(/*AllowLambda=*/true)) ||
        isDeviceOnly(sema.getCurFunctionDecl(/*AllowLambda=*/false)))
      return true;
    if (!sema.CodeSynthesisContexts.empty() && info.getLocation().isValid()) {
      provisional_.instantiations.push_back(
          {info.getLocation(), messageOf(info),
           sema.CodeSynthesisContexts.front().PointOfInstantiation});
      return true;
    }
    return false;
  }

  // `extern const dim3 blockDim;` at namespace scope in the host pass (ccminer's cuda_helper.h,
  // for editors): nvcc's host compile declares the built-in variables with exactly those types, so
  // it accepts the redeclaration; clang declares them with types of its own
  // (__clang_cuda_builtin_vars.h) and rejects it. The kernels keep clang's declaration.
  bool redeclaresBuiltinVariable(const Diagnostic &info) const {
    if (info.getNumArgs() < 1 || info.getArgKind(0) != DiagnosticsEngine::ak_declarationname)
      return false;
    const DeclarationName name = DeclarationName::getFromOpaqueInteger(info.getRawArg(0));
    static const std::set<std::string> builtins = {"threadIdx", "blockIdx", "blockDim", "gridDim",
                                                   "warpSize"};
    if (!name.isIdentifier() || !builtins.count(name.getAsString()))
      return false;
    const SourceManager &sm = ci_.getSourceManager();
    for (const NamedDecl *d : ci_.getASTContext().getTranslationUnitDecl()->lookup(name)) {
      if (llvm::StringRef(sm.getFilename(sm.getSpellingLoc(d->getLocation())))
              .ends_with("__clang_cuda_builtin_vars.h"))
        return true;
    }
    return false;
  }

  CompilerInstance &ci_;
  DiagnosticConsumer *inner_;
  std::unique_ptr<DiagnosticConsumer> owned_;
  ProvisionalErrors &provisional_;
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
    diags.setClient(new HostParseDiagnostics(ci, inner, std::move(owned), provisional_),
                    /*ShouldOwnClient=*/true);
    return true;
  }
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &ci, llvm::StringRef) override {
    std::vector<std::unique_ptr<ASTConsumer>> consumers;
    consumers.push_back(std::make_unique<ProvisionalErrorConfirmer>(ci, provisional_));
    consumers.push_back(finder_.newASTConsumer());
    return std::make_unique<MultiplexConsumer>(std::move(consumers));
  }

private:
  ast_matchers::MatchFinder &finder_;
  ProvisionalErrors provisional_;
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
