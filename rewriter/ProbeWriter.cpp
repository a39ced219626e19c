#include "ProbeWriter.h"

#include "ExprQueries.h"
#include "ProbeText.h"
#include "SourceText.h"

#include "clang/AST/ParentMap.h"
#include "llvm/ADT/StringExtras.h"

namespace mgb::rewriter {

using namespace clang;

namespace {

class Writer {
public:
  Writer(const FunctionPlan &plan, const Stmt *body, ASTContext &Ctx, EditSet &edits,
         llvm::raw_ostream &explain, RewriteDiagnostics &diagnostics)
      : plan_(plan), Ctx_(Ctx), SM_(Ctx.getSourceManager()), LO_(Ctx.getLangOpts()), edits_(edits),
        explain_(explain), diagnostics_(diagnostics), parents_(const_cast<Stmt *>(body)) {}

  void run() {
    explain_ << "function " << plan_.name << " (" << siteOf(plan_.location, SM_) << ")";
    if (plan_.alreadyRewritten) {
      explain_ << ": already rewritten, left unchanged\n";
      return;
    }
    explain_ << "\n";
    // Library calls first, in every task: one spelled inside a launch's argument (`k<<<g, b>>>(
    // thrust::raw_pointer_cast(&v[0]))` in a template) has its edits made before the launch
    // hoists that argument, which takes them along (EditSet::replaceMoving).
    for (const Task &T : plan_.tasks) {
      if (T.isStatic) {
        writeStatic(T);
        for (const auto &[at, message] : T.warnings)
          diagnostics_.warn(at, Ctx_, message);
        for (const Launch *L : T.launches)
          if (L->library && !L->foreign.empty())
            writeLibraryCall(*L, T);
      } else
        for (const Launch *L : T.launches)
          if (L->library)
            writeLibraryCall(*L, T);
    }
    for (const Task &T : plan_.tasks) {
      if (!T.isStatic)
        for (const Launch *L : T.launches)
          if (!L->library)
            writeLazy(*L, T.lazyReason);
      for (const Launch *L : T.launches)
        wrapStream(*L);
    }
  }

private:
  std::string file(SourceLocation loc) const {
    OptionalFileEntryRef e = SM_.getFileEntryRefForID(SM_.getFileID(SM_.getExpansionLoc(loc)));
    return e ? EditSet::canonicalPath(e->getName()) : "";
  }

  std::string names(const std::set<const VarDecl *> &vars) const {
    std::vector<std::string> out;
    for (const VarDecl *v : vars)
      out.push_back(v->getNameAsString());
    std::sort(out.begin(), out.end());
    return llvm::join(out, ", ");
  }

  // ---- static tasks
  // -------------------------------------------------------------------------------

  void writeStatic(const Task &T) {
    const Stmt *firstStmt = T.region->body_begin()[T.first];
    const Stmt *lastStmt = T.region->body_begin()[T.last];
    SourceLocation begin = statementBegin(firstStmt, SM_);
    if (!edits_.isEditable(begin, SM_))
      return;
    int n = edits_.nextTaskNumber(file(begin));
    std::string var = "mgb_task_" + std::to_string(n);
    std::string indent = indentationAt(begin, SM_);
    const Launch *firstLaunch = T.launches.front();
    // With a return inside a macro body, a local guard ends the task whenever the block is left;
    // the end after the region's last statement disarms it (mgb_task_end(0) does nothing).
    std::string guard = var + "_guard";
    std::string scope = T.endsAtScopeExit ? "struct " + var + "_scope { mgb_task t; ~" + var +
                                                "_scope() { mgb_task_end(t); } } " + guard + "{" +
                                                var + "};\n" + indent
                                          : "";
    const std::string site = siteOf(firstLaunch->expr()->getBeginLoc(), SM_);
    edits_.insert(begin,
                  "mgb_task " + var + " = mgb_task_begin(" + T.sizeText + ", " + dim(T.gridText) +
                      ", " + dim(T.blockText) + ", (const void *)" +
                      (LO_.CPlusPlus || T.kernelText != "nullptr" ? T.kernelText : "0") + ", \"" +
                      site + "\");\n" + indent + scope + bindAtBegin(T, var, site, indent),
                  SM_);
    std::string end = "mgb_task_end(" + var + ");";
    if (T.endsAtScopeExit)
      end += " " + guard + ".t = 0;";
    // Frees moved up to the memory's last use go just before the end; where they were, they are
    // disabled (FreeHoisting.h).
    std::string frees;
    for (const std::string &free : T.hoistedFrees)
      frees += free + "\n" + indent;
    for (const Stmt *S : T.disabledFrees) {
      edits_.insert(statementBegin(S, SM_),
                    "/* mgb: freed above, at the memory's last use */ if (0) { ", SM_);
      edits_.insert(statementEnd(S, SM_, LO_), " }", SM_);
    }
    if (!isa<ReturnStmt>(lastStmt))
      edits_.insert(statementEnd(lastStmt, SM_, LO_), "\n" + indent + frees + end, SM_);
    for (const ReturnStmt *R : T.exits) {
      if (T.endsAtScopeExit)
        break; // the guard ends the task on every return
      edits_.insert(statementBegin(R, SM_), "{ " + end + " ", SM_);
      edits_.insert(statementEnd(R, SM_, LO_), " }", SM_);
    }
    explain_ << "  task " << var << ": static\n    launches:";
    for (const Launch *L : T.launches)
      explain_ << " " << kernelName(*L) << "@" << siteOf(L->expr()->getBeginLoc(), SM_);
    explain_ << "\n    objects: " << names(T.objects) << "\n    memory: " << T.sizeText
             << "\n    grid: " << T.gridText << "  block: " << T.blockText
             << "\n    region: " << siteOf(begin, SM_) << " .. "
             << siteOf(lastStmt->getEndLoc(), SM_)
             << (T.untilFunctionEnd ? " (memory not freed on every path: ends at function exit)"
                                    : "")
             << (T.endsAtScopeExit ? " (a return inside a macro: a guard ends it on leaving)" : "")
             << "\n";
    if (!T.boundAtBegin.empty())
      explain_ << "    allocations: " << T.boundAtBegin.size()
               << " passed over, past host work: the task begins at the memory's first use\n";
    if (!T.disabledFrees.empty())
      explain_ << "    frees: " << T.disabledFrees.size() << " moved up from "
               << siteOf(T.disabledFrees.front()->getBeginLoc(), SM_)
               << ", past host work, to the memory's last use\n";
  }

  // The begin moved down to the memory's first use (AllocationSinking.h) binds the pointers the
  // allocations above it set (reserved addresses, no memory yet) to the task, in one go.
  static std::string bindAtBegin(const Task &T, const std::string &var, const std::string &site,
                                 const std::string &indent) {
    if (T.boundAtBegin.empty())
      return "";
    std::vector<std::string> pointers;
    for (const VarDecl *v : T.boundAtBegin)
      pointers.push_back(v->getNameAsString());
    return "{ const void *" + var + "_memory[] = {" + llvm::join(pointers, ", ") +
           "}; mgb_prepare_pointers(\"" + site + "\", " + std::to_string(pointers.size()) + ", " +
           var + "_memory); }\n" + indent;
  }

  // A grid or block for mgb_task_begin: `mgb_dim(g)` (mgb.h's C++ overload set) in C++; a C
  // compound literal in C, whose tasks are library calls only (C has no launches): one thread.
  std::string dim(const std::string &text) const {
    if (LO_.CPlusPlus)
      return "mgb_dim(" + text + ")";
    return "(mgb_dim3){" + (text == "1" ? text : "(unsigned)(" + text + ")") + ", 1, 1}";
  }

  std::string kernelName(const Launch &L) const {
    if (const FunctionDecl *FD = L.expr()->getDirectCallee())
      return FD->getNameAsString();
    if (auto t = spelledText(L.expr()->getCallee(), SM_, LO_))
      return *t;
    return "kernel";
  }

  // ---- lazy launches
  // ------------------------------------------------------------------------------

  // A function (a kernel, perhaps by a template-id in a template: an unresolved overload set) or
  // a pointer to one.
  static bool namesFunction(const Expr *arg) {
    const Expr *bare = arg->IgnoreParenImpCasts();
    if (const auto *U = dyn_cast<UnaryOperator>(bare); U && U->getOpcode() == UO_AddrOf)
      bare = U->getSubExpr()->IgnoreParenImpCasts();
    if (isa<UnresolvedLookupExpr>(bare))
      return true;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(bare); DRE && isa<FunctionDecl>(DRE->getDecl()))
      return true;
    QualType T = arg->getType();
    return T->isFunctionType() || T->isFunctionPointerType();
  }

  // Whether the launch argument goes through mgb_prepare and mgb_arg. One with side effects
  // (`p++`) only when it can be hoisted into a variable (canHoist): else it would run twice.
  static bool wantsArg(const Expr *arg, ASTContext &Ctx, bool canHoist) {
    if (isa<CXXDefaultArgExpr>(arg))
      return false;
    const Expr *bare = arg->IgnoreParenCasts();
    if (bare->isNullPointerConstant(Ctx, Expr::NPC_ValueDependentIsNotNull))
      return false;
    if (const auto *CE = dyn_cast<CallExpr>(bare))
      if (const FunctionDecl *FD = CE->getDirectCallee(); FD && FD->getName() == "mgb_arg")
        return false;
    QualType T = bare->getType();
    return (T->isPointerType() || T->isDependentType() || T->isRecordType()) &&
           (canHoist || !bare->HasSideEffects(Ctx, false));
  }

  static bool overlaps(CharSourceRange a, CharSourceRange b) {
    return a.getBegin() == b.getBegin() || (a.getBegin() < b.getEnd() && b.getBegin() < a.getEnd());
  }

  // A launch left as written: the translation unit holds code that must never get a stand-in.
  void warnUnedited(const Launch &L, llvm::StringRef why) {
    if (edits_.isEditable(SM_.getExpansionLoc(L.call->getBeginLoc()), SM_))
      diagnostics_.warn(L.call->getBeginLoc(), Ctx_,
                        ("mgb-rewrite could not edit this launch (" + why +
                         "): the program binds its memory eagerly (no stand-ins)")
                            .str());
    edits_.noteUnseenCode(SM_);
  }

  void writeLazy(const Launch &L, const std::string &reason) {
    std::string site = siteOf(L.call->getBeginLoc(), SM_);
    explain_ << "  launch " << kernelName(L) << "@" << site << ": lazy (" << reason << ")\n";
    // Statement form when the configuration and arguments are spelled in the file (directly or
    // as macro arguments); otherwise the launch is edited inside its macro's definition.
    bool inFile = fileRange(L.call->getSourceRange(), SM_, LO_) &&
                  fileRange(L.grid->getSourceRange(), SM_, LO_) &&
                  fileRange(L.block->getSourceRange(), SM_, LO_);
    for (const Expr *arg : L.call->arguments())
      if (inFile && wantsArg(arg, Ctx_, true))
        inFile = fileRange(arg->getSourceRange(), SM_, LO_).has_value();
    auto range = [&](const Expr *E) {
      return inFile ? fileRange(E->getSourceRange(), SM_, LO_)
                    : macroBodyRange(E->getSourceRange(), SM_, LO_);
    };
    std::optional<CharSourceRange> grid = range(L.grid), block = range(L.block);
    std::optional<CharSourceRange> whole = range(L.call);
    std::vector<std::pair<CharSourceRange, std::string>> args;
    // Arguments that may have side effects (`pool.next()`, `p++`), statement form only: evaluated
    // once into a variable before mgb_prepare, which the launch then reads.
    std::string hoisted;
    std::vector<std::pair<CharSourceRange, std::string>> hoistedArgs;
    std::vector<std::string> prepareArgs; // in the launch's order
    bool ok = grid && block && whole;
    const FunctionDecl *kernel = L.call->getDirectCallee();
    for (unsigned i = 0; i < L.call->getNumArgs(); ++i) {
      const Expr *arg = L.call->getArg(i);
      if (!ok || !wantsArg(arg, Ctx_, inFile))
        continue;
      // A parameter pack forwarded (`k<<<g, b>>>(n, args...)`, moderngpu's cta_launch): each
      // element goes through mgb_arg (`mgb_arg(args)...`) and the prepare gets the pack itself;
      // never hoisted (a pack is not one value). A pattern other than the pack's name could run
      // twice, so such a launch is left to eager binding.
      if (const auto *pack = dyn_cast<PackExpansionExpr>(arg->IgnoreParens())) {
        const auto *name = dyn_cast<DeclRefExpr>(pack->getPattern()->IgnoreParenImpCasts());
        std::optional<CharSourceRange> r = name ? range(name) : std::nullopt;
        ok = r.has_value();
        if (ok) {
          args.emplace_back(*r, textOf(*r, SM_, LO_));
          prepareArgs.push_back(args.back().second + "...");
        }
        continue;
      }
      std::optional<CharSourceRange> r = range(arg);
      ok = r.has_value();
      if (!ok)
        continue;
      // A reference parameter (`Obj &o`, managed memory) binds the object itself: mgb_arg's copy
      // or a hoisted copy could not bind to it (nvcc: "initial value of reference to non-const
      // must be an lvalue"), so it stays as written; the prepare still scans its value.
      if (kernel && i < kernel->getNumParams() &&
          kernel->getParamDecl(i)->getType()->isReferenceType()) {
        if (!arg->HasSideEffects(Ctx_, /*IncludePossibleEffects=*/true))
          prepareArgs.push_back(textOf(*r, SM_, LO_));
        continue;
      }
      if (inFile && arg->HasSideEffects(Ctx_, /*IncludePossibleEffects=*/true)) {
        SourceLocation at = r->getBegin();
        std::string name = "mgb_launch_arg_" + std::to_string(SM_.getExpansionLineNumber(at)) +
                           "_" + std::to_string(SM_.getExpansionColumnNumber(at));
        hoisted += "auto " + name + " = " + edits_.textWithEdits(*r, SM_, LO_) + "; ";
        hoistedArgs.emplace_back(*r, name);
        prepareArgs.push_back(name);
      } else {
        args.emplace_back(*r, textOf(*r, SM_, LO_));
        prepareArgs.push_back(edits_.textWithEdits(*r, SM_, LO_));
      }
    }
    // In a macro body each argument edited must be its own piece of the definition: one
    // parameter standing for several arguments (`__VA_ARGS__`) cannot be wrapped argument by
    // argument.
    if (ok && !inFile)
      for (size_t i = 0; ok && i < args.size(); ++i)
        for (size_t j = i + 1; ok && j < args.size(); ++j)
          ok = !overlaps(args[i].first, args[j].first);
    if (!ok || !edits_.isEditable(whole->getBegin(), SM_)) {
      if (!inFile && whole && edits_.isEditable(whole->getBegin(), SM_))
        edits_.rejectMacroEdits(whole->getBegin(), SM_);
      warnUnedited(L, "spelled across macros, or its macro's parameters stand for several "
                      "arguments");
      return;
    }
    if (!inFile) // every expansion of the macro must produce the same text
      site = siteOf(whole->getBegin(), SM_);
    std::string prepare = "mgb_prepare(mgb_dim(" + textOf(*grid, SM_, LO_) + "), mgb_dim(" +
                          textOf(*block, SM_, LO_) + "), (const void *)" +
                          kernelText(L.call, SM_, LO_, !inFile) + ", \"" + site + "\"";
    for (const std::string &text : prepareArgs)
      prepare += ", " + text;
    prepare = hoisted + prepare + ")";
    if (!inFile) {
      // Launch inside a macro body: `(mgb_prepare(...), k<<<...>>>(mgb_arg(p)...))` in the
      // definition, the same for every expansion or for none.
      std::vector<EditSet::MacroEdit> macroEdits;
      auto at = [](SourceLocation loc) { return CharSourceRange::getCharRange(loc, loc); };
      macroEdits.push_back({at(whole->getBegin()), "(" + prepare + ", "});
      for (const auto &[r, text] : args) {
        macroEdits.push_back({at(r.getBegin()), "mgb_arg("});
        macroEdits.push_back({at(r.getEnd()), ")"});
      }
      macroEdits.push_back({at(whole->getEnd()), ")"});
      if (!edits_.applyMacroEdits(whole->getBegin(), macroEdits, SM_))
        warnUnedited(L, "its macro is expanded for kernels or arguments that need other edits "
                        "of its definition");
      return;
    }
    for (const auto &[r, text] : args) {
      edits_.insert(r.getBegin(), "mgb_arg(", SM_);
      edits_.insert(r.getEnd(), ")", SM_);
    }
    for (const auto &[r, name] : hoistedArgs)
      edits_.replaceMoving(r, "mgb_arg(" + name + ")", SM_);
    const Stmt *S = enclosingStatement(L.call);
    // Hoisted arguments are declarations: braces keep them from crossing a later `case` label
    // (a statement declaring a variable itself must stay unbraced).
    insertBeforeStatement(S, prepare, !hoisted.empty() && !isa<DeclStmt>(S));
  }

  // A library call must never receive a stand-in (HeCBench spmv: cusparseCreateCsr got
  // stand-ins and failed with an internal error). `mgb_prepare(mgb_dim(1), mgb_dim(1), nullptr,
  // "site", p, q)` before its statement binds them to one task (replaying their recorded copies,
  // making its GPU current) and `mgb_arg(p)` hands the library the real addresses; in C,
  // mgb_prepare_pointers and mgb_real_ptr. In a static task only its foreign pointers (not
  // allocated in the function) need it; in a lazy one all of them, and the prepare also names
  // the memory earlier library calls of the function bound and that is not freed before this
  // call, so that this call's memory joins their task (and GPU): a cuSPARSE matrix and the
  // vectors multiplied with it must live on one device.
  void writeLibraryCall(const Launch &L, const Task &T) {
    std::string site = siteOf(L.library->getBeginLoc(), SM_);
    explain_ << "  library call " << kernelName(L) << "@" << site << ": "
             << (T.isStatic ? "in a static task; its other device pointers bound at the call"
                            : "lazy (" + T.lazyReason + ")");
    for (size_t i = 0; i < L.foreign.size(); ++i) {
      std::optional<std::string> t = spelledText(L.foreign[i], SM_, LO_);
      explain_ << (i == 0 ? " (from outside the function: " : ", ") << "`"
               << (t ? *t : std::string("in a macro body")) << "`"
               << (i + 1 == L.foreign.size() ? ")" : "");
    }
    explain_ << "\n";
    std::vector<CharSourceRange> wrapped;
    std::vector<std::string> named; // what the prepare names, each once
    std::set<const VarDecl *> namedVars;
    for (const Expr *arg : L.library->arguments()) {
      if (namesFunction(arg))
        continue; // a kernel handed to the library (cub::MaxSmOccupancy): code, not memory
      const DeclRefExpr *DRE = arg->getType()->isPointerType() ? pointerBase(arg) : nullptr;
      const auto *v = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
      bool object =
          !T.isStatic && v && std::find(L.objects.begin(), L.objects.end(), v) != L.objects.end();
      bool foreign = std::find(L.foreign.begin(), L.foreign.end(), arg) != L.foreign.end();
      if (!object && !foreign)
        continue;
      std::optional<CharSourceRange> r = fileRange(arg->getSourceRange(), SM_, LO_);
      if (!r || !edits_.isEditable(r->getBegin(), SM_)) {
        diagnostics_.warn(L.library->getBeginLoc(), Ctx_,
                          "mgb-rewrite could not edit the device pointers of this library call "
                          "(spelled in a macro body): the program binds its memory eagerly (no "
                          "stand-ins)");
        edits_.noteUnseenCode(SM_);
        return;
      }
      wrapped.push_back(*r);
      if (object && !namedVars.insert(v).second)
        continue;
      std::string text = textOf(*r, SM_, LO_);
      // An argument with side effects (`p++`) is evaluated once, in the call: the prepare
      // leaves it out, and mgb_arg binds it there if it is still unbound.
      if (!arg->HasSideEffects(Ctx_, /*IncludePossibleEffects=*/false) &&
          std::find(named.begin(), named.end(), text) == named.end())
        named.push_back(text);
    }
    if (wrapped.empty())
      return;
    for (const CharSourceRange &r : wrapped) {
      edits_.insert(r.getBegin(), LO_.CPlusPlus ? "mgb_arg(" : "mgb_real_ptr(", SM_);
      edits_.insert(r.getEnd(), ")", SM_);
    }
    SourceLocation at = L.library->getBeginLoc();
    if (!T.isStatic)
      for (const Launch &earlier : plan_.launches) {
        if (!earlier.library || !SM_.isBeforeInTranslationUnit(earlier.library->getBeginLoc(), at))
          continue;
        for (const VarDecl *v : earlier.objects)
          if (!freedBefore(v, at) && namedVars.insert(v).second)
            named.push_back(v->getNameAsString());
      }
    if (!named.empty())
      insertBeforeStatement(enclosingStatement(L.library), prepareCall(site, named));
  }

  // The prepare before a call into a library: C++'s mgb_prepare, or C's mgb_prepare_pointers.
  std::string prepareCall(const std::string &site, const std::vector<std::string> &args) const {
    if (LO_.CPlusPlus) {
      std::string text = "mgb_prepare(mgb_dim(1), mgb_dim(1), nullptr, \"" + site + "\"";
      for (const std::string &arg : args)
        text += ", " + arg;
      return text + ")";
    }
    std::string list;
    for (const std::string &arg : args)
      list += (list.empty() ? "" : ", ") + ("(const void *)(" + arg + ")");
    return "mgb_prepare_pointers(\"" + site + "\", " + std::to_string(args.size()) +
           ", (const void *const[]){" + list + "})";
  }

  bool freedBefore(const VarDecl *v, SourceLocation at) const {
    for (const MemOp &op : plan_.ops)
      if (op.kind == OpKind::Free && op.object == v &&
          SM_.isBeforeInTranslationUnit(op.call->getBeginLoc(), at))
        return true;
    return false;
  }

  // `prepare;` before S, in braces with S when asked or when S is the body of an if/for/while
  // without braces.
  void insertBeforeStatement(const Stmt *S, const std::string &prepare, bool brace = false) {
    const Stmt *P = parents_.getParent(const_cast<Stmt *>(S));
    SourceLocation begin = statementBegin(S, SM_);
    if (!brace && (!P || isa<CompoundStmt, SwitchCase, LabelStmt>(P))) {
      edits_.insert(begin, prepare + ";\n" + indentationAt(begin, SM_), SM_);
    } else {
      edits_.insert(begin, "{ " + prepare + "; ", SM_);
      edits_.insert(statementEnd(S, SM_, LO_), " }", SM_);
    }
  }

  // The statement holding E that sits directly in a block or is the body of a control statement.
  const Stmt *enclosingStatement(const Stmt *E) const {
    const Stmt *S = E;
    for (;;) {
      const Stmt *P = parents_.getParent(const_cast<Stmt *>(S));
      if (!P || isa<CompoundStmt, SwitchCase, LabelStmt>(P))
        return S;
      if (const auto *If = dyn_cast<IfStmt>(P); If && (If->getThen() == S || If->getElse() == S))
        return S;
      if (const auto *For = dyn_cast<ForStmt>(P); For && For->getBody() == S)
        return S;
      if (const auto *While = dyn_cast<WhileStmt>(P); While && While->getBody() == S)
        return S;
      if (const auto *Do = dyn_cast<DoStmt>(P); Do && Do->getBody() == S)
        return S;
      if (const auto *Range = dyn_cast<CXXForRangeStmt>(P); Range && Range->getBody() == S)
        return S;
      S = P;
    }
  }

  void wrapStream(const Launch &L) {
    if (!L.stream)
      return;
    const Expr *bare = L.stream->IgnoreParenImpCasts();
    if (const auto *CE = dyn_cast<CallExpr>(bare))
      if (const FunctionDecl *FD = CE->getDirectCallee(); FD && FD->getName() == "mgb_real_stream")
        return;
    std::optional<CharSourceRange> r = editableRange(L.stream->getSourceRange(), SM_, LO_);
    if (!r || !edits_.isEditable(r->getBegin(), SM_)) {
      diagnostics_.warn(L.call->getBeginLoc(), Ctx_,
                        "the launch's stream could not be wrapped in mgb_real_stream");
      return;
    }
    edits_.insert(r->getBegin(), "mgb_real_stream(", SM_);
    edits_.insert(r->getEnd(), ")", SM_);
  }

  const FunctionPlan &plan_;
  ASTContext &Ctx_;
  const SourceManager &SM_;
  const LangOptions &LO_;
  EditSet &edits_;
  llvm::raw_ostream &explain_;
  RewriteDiagnostics &diagnostics_;
  ParentMap parents_;
};

} // namespace

void writeProbes(const FunctionPlan &plan, const Stmt *body, ASTContext &Ctx, EditSet &edits,
                 llvm::raw_ostream &explain, RewriteDiagnostics &diagnostics) {
  Writer(plan, body, Ctx, edits, explain, diagnostics).run();
}

} // namespace mgb::rewriter
