// Unit tests of the rewriter library on in-memory CUDA sources (real Clang ASTs).
#include "FileChanges.h"
#include "LaunchSpacingFS.h"
#include "MgbRewrite.h"
#include "ToolkitHeaderFS.h"

#include <catch2/catch.hpp>

using mgb::rewriter::rewriteCode;

namespace {

// The rewrite without its #line directives (the tests below are about the code; the directives
// have tests of their own).
std::string rewrite(const std::string &code, std::string *explain = nullptr) {
  llvm::Expected<std::string> out = rewriteCode(code, "input.cu", explain);
  if (!out) {
    FAIL(llvm::toString(out.takeError()));
    return "";
  }
  std::string code_only;
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(*out).split(lines, '\n');
  for (size_t i = 0; i < lines.size(); ++i)
    if (!lines[i].starts_with("#line "))
      code_only += lines[i].str() + (i + 1 < lines.size() ? "\n" : "");
  return code_only;
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

const char *kKernel = "__global__ void k(float *x, int n) { if (n) x[0] = 1; }\n";

}  // namespace

TEST_CASE("a rewrite keeps every line's number", "[rewriter]") {
  llvm::Expected<std::string> out = rewriteCode(
      "#include <cuda_runtime.h>\n__global__ void k(float *x) {}\nint main() {\n  float *d;\n"
      "  cudaMalloc(&d, 64);\n  k<<<1, 16>>>(d);\n  cudaFree(d);\n  return __LINE__;\n}\n");
  REQUIRE(static_cast<bool>(out));
  CHECK(contains(
      *out, "#include <mgb/mgb.h>\n#line 1 \"/mgb-test/input.cu\"\n#include <cuda_runtime.h>"));
  CHECK(contains(*out,
                 "mgb_task_begin((size_t)(64), mgb_dim(1), mgb_dim(16), (const void *)k, "
                 "\"input.cu:6\");\n#line 5 \"/mgb-test/input.cu\"\n  mgb_cudaMalloc"));
  CHECK(contains(*out,
                 "  mgb_cudaFree(d);\n  mgb_task_end(mgb_task_1);\n#line 8 \"/mgb-test/input.cu\"\n"
                 "  return __LINE__;"));
}

TEST_CASE("a task in one function gets probes around its operations", "[rewriter]") {
  std::string out = rewrite(std::string(kKernel) + R"(int main() {
  int n = 64;
  float *d;
  cudaMalloc(&d, n * sizeof(float));
  k<<<1, n>>>(d, n);
  cudaFree(d);
  return 0;
}
)");
  CHECK(contains(out, "#include <mgb/mgb.h>\n"));
  CHECK(contains(out,
                 "  mgb_task mgb_task_1 = mgb_task_begin((size_t)(n * sizeof(float)), "
                 "mgb_dim(1), mgb_dim(n), (const void *)k, \"input.cu:6\");\n"
                 "  mgb_cudaMalloc(&d, n * sizeof(float));"));
  CHECK(contains(out, "  mgb_cudaFree(d);\n  mgb_task_end(mgb_task_1);\n  return 0;"));
  CHECK(contains(out, "k<<<1, n>>>(d, n);"));
}

TEST_CASE("a device pointer in a global is bound lazily", "[rewriter]") {
  std::string explain;
  std::string out = rewrite(std::string(kKernel) + R"(float *g;
void run() {
  k<<<2, 32>>>(g, 1);
}
)",
                            &explain);
  CHECK(contains(out,
                 "  mgb_prepare(mgb_dim(2), mgb_dim(32), (const void *)k, \"input.cu:4\", g);\n"
                 "  k<<<2, 32>>>(mgb_arg(g), 1);"));
  CHECK_FALSE(contains(out, "mgb_task_begin"));
  CHECK(contains(explain, "lazy (argument `g` is not a local device pointer"));
}

TEST_CASE("allocation in a loop that the launch is outside of goes lazy", "[rewriter]") {
  std::string explain;
  std::string out = rewrite(std::string(kKernel) + R"(void run(int n) {
  float *d = nullptr;
  for (int i = 0; i < 2; ++i)
    cudaMalloc(&d, n);
  k<<<1, 1>>>(d, n);
  cudaFree(d);
}
)",
                            &explain);
  CHECK(contains(out, "mgb_prepare("));
  CHECK_FALSE(contains(out, "mgb_task_begin"));
  CHECK(contains(explain, "does not dominate"));
}

TEST_CASE("a launch as the body of a loop gets braces", "[rewriter]") {
  std::string out = rewrite(std::string(kKernel) + R"(void run(float *p) {
  for (int i = 0; i < 3; ++i)
    k<<<1, 1>>>(p, i);
}
)");
  CHECK(contains(out,
                 "    { mgb_prepare(mgb_dim(1), mgb_dim(1), (const void *)k, \"input.cu:4\", p); "
                 "k<<<1, 1>>>(mgb_arg(p), i); }"));
}

TEST_CASE("a launch inside a macro body is edited in the definition", "[rewriter]") {
  std::string out = rewrite(std::string(kKernel) + R"(#define RUN(p) k<<<1, 1>>>(p, 0)
void run(float *q) {
  RUN(q);
}
)");
  CHECK(contains(out,
                 "#define RUN(p) (mgb_prepare(mgb_dim(1), mgb_dim(1), (const void *)k, "
                 "\"input.cu:2\", p), k<<<1, 1>>>(mgb_arg(p), 0))"));
}

// Round 13 (CloverLeaf_CUDA's CUDALAUNCH, one macro for every kernel of a file): the definition is
// one text for all expansions, so the launch is edited there only where they all agree.
TEST_CASE("a launch macro whose expansions need other edits is left as written, eagerly",
          "[rewriter]") {
  std::string both = rewrite(std::string(kKernel) + R"(__global__ void kp(float *x) {}
__global__ void ki(int n) {}
#define RUN(f, x) f<<<1, 1>>>(x)
void run(float *q) {
  RUN(kp, q);
  RUN(ki, 4);
}
)");
  CHECK(contains(both, "#define RUN(f, x) f<<<1, 1>>>(x)\n"));
  CHECK_FALSE(contains(both, "mgb_prepare"));
  CHECK(contains(both, "#include <mgb/unseen_tu.h>"));
  // Expansions that agree share one edit of the definition.
  std::string same = rewrite(std::string(kKernel) + R"(#define RUN(p) k<<<1, 1>>>(p, 0)
void run(float *q, float *r) {
  RUN(q);
  RUN(r);
}
)");
  CHECK(contains(same,
                 "#define RUN(p) (mgb_prepare(mgb_dim(1), mgb_dim(1), (const void *)k, "
                 "\"input.cu:2\", p), k<<<1, 1>>>(mgb_arg(p), 0))\n"));
  CHECK_FALSE(contains(same, "unseen_tu.h"));
}

TEST_CASE("a launch macro's __VA_ARGS__ standing for several arguments is left as written",
          "[rewriter]") {
  std::string out = rewrite(R"(__global__ void k(int n, float *a, float *b) {}
#define RUN(f, ...) f<<<1, 1>>>(1, __VA_ARGS__)
void run(float *a, float *b) {
  RUN(k, a, b);
}
)");
  CHECK(contains(out, "#define RUN(f, ...) f<<<1, 1>>>(1, __VA_ARGS__)\n"));
  CHECK_FALSE(contains(out, "mgb_arg"));
  CHECK(contains(out, "#include <mgb/unseen_tu.h>"));
}

TEST_CASE("API calls: CUDA's are renamed, defaults spelled out, others untouched", "[rewriter]") {
  std::string out = rewrite(R"(namespace mine { int cudaFree(void *) { return 0; } }
void run(cudaEvent_t e, void *p) {
  cudaEventRecord(e);
  mine::cudaFree(p);
  cudaFree(p);
}
)");
  CHECK(contains(out, "mgb_cudaEventRecord(e, 0);"));
  CHECK(contains(out, "mine::cudaFree(p);"));
  CHECK(contains(out, "\n  mgb_cudaFree(p);"));
}

TEST_CASE("a CUDA call spelled in a macro body is renamed in the macro", "[rewriter]") {
  std::string out = rewrite(R"(#define FREE(p) cudaFree(p)
void run(void *p) { FREE(p); }
)");
  CHECK(contains(out, "#define FREE(p) mgb_cudaFree(p)"));
}

TEST_CASE("rewriting rewritten code changes nothing", "[rewriter]") {
  std::string once = rewrite(std::string(kKernel) + R"(float *g;
int main() {
  float *d;
  cudaStream_t s;
  cudaStreamCreate(&s);
  cudaMalloc(&d, 4);
  k<<<1, 1, 0, s>>>(d, 1);
  k<<<1, 1>>>(g, 1);
  cudaFree(d);
}
)");
  CHECK(contains(once, "mgb_real_stream(s)"));
  CHECK(rewrite(once) == once);
}

TEST_CASE("a source that does not parse is an error", "[rewriter]") {
  llvm::Expected<std::string> out = rewriteCode("int main() { return nope; }\n");
  REQUIRE_FALSE(static_cast<bool>(out));
  CHECK(contains(llvm::toString(out.takeError()), "does not parse"));
}

TEST_CASE("errors the host compile would meet still fail the parse", "[rewriter]") {
  // Tolerated only where device code alone reaches them (golden nvcc_accepts has those cases):
  // an instantiation host code makes, an out-of-line definition matching nothing for the host.
  llvm::Expected<std::string> instantiated = rewriteCode(
      "template <class T> void f(T t) { t.nope(); }\n"
      "int main() { f(1); float *d; cudaMalloc(&d, 4); cudaFree(d); return 0; }\n");
  REQUIRE_FALSE(static_cast<bool>(instantiated));
  llvm::consumeError(instantiated.takeError());
  llvm::Expected<std::string> mismatched = rewriteCode(
      "struct L { L(int *p); void f(); };\n__device__ L::L(long *p) {}\n"
      "void L::f(int) {}\nint main() { return 0; }\n");
  REQUIRE_FALSE(static_cast<bool>(mismatched));
  llvm::consumeError(mismatched.takeError());
}

TEST_CASE("the `<< <` spacing is shown to clang as `<<<` with offsets kept", "[rewriter]") {
  std::string in = "k<T><< <g, b>> >(x); a = b >> c; v<w<int>> > z;";
  std::string out = mgb::rewriter::normalizeLaunchSpacing(in);
  CHECK(out == "k<T><<< g, b>>> (x); a = b >> c; v<w<int>> > z;");
  CHECK(out.size() == in.size());
  // A shift operator's template arguments (cuda-api-wrappers' friend declarations) stay.
  const std::string shift = "friend S& operator<< <2>(S&, const T<2>&); x.operator << <1>(s);";
  CHECK(mgb::rewriter::normalizeLaunchSpacing(shift) == shift);
  CHECK(mgb::rewriter::normalizeLaunchSpacing("my_operator<< <g, b>> >(x);") ==
        "my_operator<<< g, b>>> (x);");
}

TEST_CASE("a braced grid or block is typed dim3, nowhere else", "[rewriter]") {
  using mgb::rewriter::typeBracedLaunchConfigs;
  CHECK(typeBracedLaunchConfigs("k<<<g, {x, y, 1}, 0, s>>>(p);") ==
        "k<<<g, dim3{x, y, 1}, 0, s>>>(p);");
  CHECK(typeBracedLaunchConfigs("k<< <{2, 2}, b>> >(p);") == "k<< <dim3{2, 2}, b>> >(p);");
  CHECK(typeBracedLaunchConfigs("k<<<f(a, {1}), b, {}>>>(p);") == "k<<<f(a, {1}), b, {}>>>(p);");
  const std::string kept = "log(\"k<<<{%d}, %d>>>\"); // k<<<g, {1}>>>\nk<<<g, b>>>({1});";
  CHECK(typeBracedLaunchConfigs(kept) == kept);
  CHECK(typeBracedLaunchConfigs("a << {1}; b = c<<<d;") == "a << {1}; b = c<<<d;");
}

TEST_CASE("the include goes after the leading comments", "[rewriter]") {
  std::string out = mgb::rewriter::insertInclude("// license\n/* more */\n#include <a.h>\n", {});
  CHECK(out ==
        "// license\n/* more */\n#include <cuda_runtime.h>\n#include <mgb/mgb.h>\n#line 3\n"
        "#include <a.h>\n");
  CHECK(mgb::rewriter::insertInclude(out, {}) == out);
}

TEST_CASE("the include goes after a byte order mark, and the #line names the file", "[rewriter]") {
  std::string out = mgb::rewriter::insertInclude("\xEF\xBB\xBFint x;\n", {}, false, "a \"b\".cu");
  CHECK(out ==
        "\xEF\xBB\xBF#include <cuda_runtime.h>\n#include <mgb/mgb.h>\n#line 1 \"a \\\"b\\\".cu\"\n"
        "int x;\n");
}

TEST_CASE("an edit that adds or removes lines is followed by a #line", "[rewriter]") {
  using clang::tooling::Replacement;
  clang::tooling::Replacements reps;
  std::string in = "int a;\n  f(x);\n#define M(p) \\\n  g(p)\nint b;\n";
  // A probe before `f(x);` (line 2), a one-line edit, and a #define losing its continuation line
  // (the #line follows the directive: no newline may go inside it).
  CHECK(!reps.add(Replacement("in.cu", 9, 0, "probe();\n  ")));
  CHECK(!reps.add(Replacement("in.cu", 11, 1, "y")));
  CHECK(!reps.add(Replacement("in.cu", 28, 8, "g2(p)")));
  llvm::Expected<std::string> out = mgb::rewriter::applyKeepingLines(in, reps, "in.cu");
  REQUIRE(static_cast<bool>(out));
  CHECK(*out ==
        "int a;\n  probe();\n#line 2 \"in.cu\"\n  f(y);\n#define M(p) g2(p)\n"
        "#line 5 \"in.cu\"\nint b;\n");
}

TEST_CASE("a file nothing changed is copied under its own name, after any byte order mark",
          "[rewriter]") {
  using mgb::rewriter::namedCopy;
  CHECK(namedCopy("int a;\n", std::string("src/a.c")) == "#line 1 \"src/a.c\"\nint a;\n");
  CHECK(namedCopy("\xEF\xBB\xBFint a;\n", std::string("a.c")) ==
        "\xEF\xBB\xBF#line 1 \"a.c\"\nint a;\n");
  CHECK(namedCopy("int a;\n", std::nullopt) == "int a;\n");  // --line-names=none: as it is
}

TEST_CASE("clang's CUDA headers get the toolkit's own headers, not a project's of that name",
          "[rewriter]") {
  std::string in =
      "#include <cmath>\n#include \"cuda.h\"\n  #  include \"texture_fetch_functions.h\"\n"
      "#include \"crt/host_runtime.h\"\n";
  std::string out = mgb::rewriter::pinToolkitIncludes(
      in, "/cuda/include",
      [](llvm::StringRef name) { return name != "texture_fetch_functions.h"; });
  CHECK(out ==
        "#include <cmath>\n#include \"/cuda/include/cuda.h\"\n  #  include "
        "\"texture_fetch_functions.h\"\n#include \"/cuda/include/crt/host_runtime.h\"\n");
}
TEST_CASE("clang's CUDA wrapper does not force curand_mtgp32_kernel.h on the program",
          "[rewriter]") {
  CHECK(mgb::rewriter::withoutCurandForceInclude(
            "#define dim3 X\n#include \"curand_mtgp32_kernel.h\"\n#pragma pop_macro(\"dim3\")\n") ==
        "#define dim3 X\n\n#pragma pop_macro(\"dim3\")\n");
  CHECK(mgb::rewriter::curandBuiltinVarsRetyped("#ifndef __CUDA_ARCH__\nextern const dim3 "
                                                "blockDim;\nextern  const uint3 threadIdx ;\n") ==
        "#ifndef __CUDA_ARCH__\nextern const __cuda_builtin_blockDim_t blockDim;\n"
        "extern const __cuda_builtin_threadIdx_t threadIdx;\n");
  // nvcc compiles both; the first failed the parse with `-DV=4` (the header's parameter V).
  llvm::Expected<std::string> plain = rewriteCode(
      "int main() { float *d; cudaMalloc(&d, 4); cudaFree(d); }\n", "v.cu", nullptr, {"-DV=4"});
  REQUIRE(static_cast<bool>(plain));
  CHECK(contains(*plain, "mgb_cudaMalloc(&d, 4)"));
  llvm::Expected<std::string> curand = rewriteCode(
      "#include <curand_kernel.h>\n"
      "__global__ void seed(curandState *s) { curand_init(1, threadIdx.x, 0, &s[threadIdx.x]); }\n"
      "int main() { curandState *d; cudaMalloc(&d, 64 * sizeof(curandState));\n"
      "  seed<<<1, 64>>>(d); cudaFree(d); }\n",
      "c.cu");
  REQUIRE(static_cast<bool>(curand));
  CHECK(contains(*curand, "mgb_cudaMalloc(&d, 64 * sizeof(curandState))"));
}
TEST_CASE("a project header named cuda.h does not hide the toolkit's from clang's CUDA wrapper",
          "[rewriter]") {
  // -I puts the project's cuda.h (test/rewriter/inputs/cuda_h_shadow/src) before the toolkit's.
  llvm::Expected<std::string> out =
      rewriteCode("#include \"cuda.h\"\nint main() { float *d; cudaMalloc(&d, 4); cudaFree(d); }\n",
                  "input.cu", nullptr, {"-I" MGB_TEST_SHADOW_DIR});
  REQUIRE(static_cast<bool>(out));
  CHECK(contains(*out, "mgb_cudaMalloc(&d, 4)"));
}

TEST_CASE("a source's parse language comes from -x, else a host compiler's extension rule",
          "[rewriter]") {
  using mgb::rewriter::languageOf;
  using mgb::rewriter::ParseLanguage;
  CHECK(languageOf({"gcc", "-c", "cuda.c"}, "cuda.c") == ParseLanguage::C);
  CHECK(languageOf({"g++", "-c", "cuda.c"}, "cuda.c") == ParseLanguage::CXX);
  CHECK(languageOf({"/usr/bin/x86_64-linux-gnu-gcc-12", "main.cpp"}, "main.cpp") ==
        ParseLanguage::CXX);
  CHECK(languageOf({"mgb-cc", "-x", "c++", "helper.c"}, "helper.c") == ParseLanguage::CXX);
  CHECK(languageOf({"clang-tool", "-x", "c", "helper.c"}, "helper.c") == ParseLanguage::C);
  CHECK(languageOf({"nvcc", "-c", "kernels.cpp"}, "kernels.cpp") == ParseLanguage::Cuda);
  CHECK(languageOf({"mgb-nvcc", "helper.c"}, "helper.c") == ParseLanguage::Cuda);
  CHECK(languageOf({"clang-tool", "k.cu"}, "k.cu") == ParseLanguage::Cuda);
}

TEST_CASE("a C source gets C probes and C++-free renames", "[rewriter]") {
  llvm::Expected<std::string> out = rewriteCode(R"(#include <cuda_runtime.h>
#include <cublas_v2.h>
void axpy(cublasHandle_t h, int n, float a) {
  float *x, *y;
  cudaMalloc((void **)&x, n * sizeof(float));
  cudaMalloc((void **)&y, n * sizeof(float));
  cublasSaxpy(h, n, &a, x, 1, y, 1);
  cudaFree(x);
  cudaFree(y);
}
)",
                                                "helper.c", nullptr, {"-x", "c"});
  REQUIRE(static_cast<bool>(out));
  CHECK(contains(*out,
                 "mgb_task_begin((size_t)(n * sizeof(float)) + (size_t)(n * sizeof(float)), "
                 "(mgb_dim3){1, 1, 1}, (mgb_dim3){1, 1, 1}, (const void *)0, "
                 "\"helper.c:7\");"));
  CHECK(contains(*out, "mgb_cudaFree(y);\n  mgb_task_end(mgb_task_1);"));
  CHECK_FALSE(contains(*out, "mgb_dim("));
  CHECK_FALSE(contains(*out, "nullptr"));
}

TEST_CASE("a host scalar's address in a template is not taken for device memory", "[rewriter]") {
  // `&alpha` of a `const T` is an operator call in the template (T may overload `&`): a host
  // address all the same (HeCBench blas-gemmStridedBatched: it made three calls route eagerly).
  std::string explain;
  std::string out = rewrite(R"(#include <cublas_v2.h>
template <typename T> void scale(cublasHandle_t handle, int n, float *outside) {
  T *d;
  cudaMalloc((void **)&d, n * sizeof(T));
  const T alpha = 2;
  cublasSscal(handle, n, &alpha, d, 1);
  cublasSscal(handle, n, &alpha, outside, 1);
  cudaFree(d);
}
template void scale<float>(cublasHandle_t, int, float *);
)",
                            &explain);
  CHECK(contains(out, "cublasSscal(handle, n, &alpha, d, 1);"));  // the task's own memory
  // (it also names d, the memory of the earlier call: one task, one GPU for both)
  CHECK(contains(out, "mgb_prepare(mgb_dim(1), mgb_dim(1), nullptr, \"input.cu:7\", outside, d);"));
  CHECK(contains(out, "cublasSscal(handle, n, &alpha, mgb_arg(outside), 1);"));
  CHECK(contains(explain, "(from outside the function: `outside`)"));
}

TEST_CASE("an export-fixes replacement turns the original into the rewrite, on whole lines",
          "[rewriter]") {
  using mgb::rewriter::FileResult;
  std::vector<FileResult> cases = {
      {"/a.cu", "int a;\nint b;\nint c;\n", "#include <mgb/mgb.h>\nint a;\nint b;\nint c;\n", ""},
      {"/b.cu", "int a;\nint b;\nint c;\n", "int a;\nint bb;\nint c;\n", ""},
      {"/c.cu", "int a;\nint b;", "int a;\nint b;\nint c;", ""},
      {"/d.cu", "x", "y", ""},
      {"/e.cu", "int a;\n  f(p);\n  f(p);\n", "int a;\n  f(mgb_arg(p));\n  f(p);\n", ""},
  };
  for (const FileResult &r : cases) {
    clang::tooling::Replacement fix = mgb::rewriter::replacementFor(r);
    INFO(r.path);
    CHECK(fix.getFilePath() == r.path);
    clang::tooling::Replacements all(fix);
    llvm::Expected<std::string> applied = clang::tooling::applyAllReplacements(r.original, all);
    REQUIRE(static_cast<bool>(applied));
    CHECK(*applied == r.rewritten);
    // Whole lines: the span starts a line and ends at a line's start or the text's end.
    CHECK((fix.getOffset() == 0 || r.original[fix.getOffset() - 1] == '\n'));
    size_t end = fix.getOffset() + fix.getLength();
    CHECK((end == r.original.size() || r.original[end - 1] == '\n'));
  }
  std::string yaml = mgb::rewriter::fixesYaml(cases, "/a.cu");
  CHECK(contains(yaml, "MainSourceFile:  '/a.cu'"));
  CHECK(contains(yaml, "FilePath:        '/e.cu'"));
}

TEST_CASE("after the original's own #line, the rewrite's #line counts from it", "[rewriter]") {
  using clang::tooling::Replacement;
  clang::tooling::Replacements reps;
  std::string in = "int a;\n#line 100 \"g\\\"en.y\"\nint b;\n  f(x);\n";
  CHECK(!reps.add(Replacement("in.cu", 36, 0, "probe();\n  ")));
  llvm::Expected<std::string> out = mgb::rewriter::applyKeepingLines(in, reps, "in.cu");
  REQUIRE(static_cast<bool>(out));
  CHECK(*out ==
        "int a;\n#line 100 \"g\\\"en.y\"\nint b;\n  probe();\n#line 101 "
        "\"g\\\"en.y\"\n  f(x);\n");
}

TEST_CASE("warnings clang makes errors by default do not fail the parse", "[rewriter]") {
  // Old C that gcc 12 compiles with warnings: an implicit declaration, an int made a pointer.
  llvm::Expected<std::string> out = rewriteCode(
      "#include <cuda_runtime.h>\nint main(void) {\n  float *d;\n  int *p = 5;\n"
      "  legacy_init();\n  cudaMalloc((void **)&d, 64);\n  cudaFree(d);\n"
      "  return p != 0;\n}\n",
      "legacy.c", nullptr, {"-x", "c"});
  REQUIRE(static_cast<bool>(out));
  CHECK(contains(*out, "mgb_cudaMalloc((void **)&d, 64);"));
}

TEST_CASE("an error in a kernel does not fail the parse; one in host code does", "[rewriter]") {
  const char *kernel =
      "struct Acc { float s = 0; };\n"
      "__global__ void k(float *x) { __shared__ Acc a; x[0] = a.s; }\n";
  llvm::Expected<std::string> device = rewriteCode(
      std::string(kernel) + "int main() { float *d; cudaMalloc(&d, 4); k<<<1, 1>>>(d); }\n");
  REQUIRE(static_cast<bool>(device));
  CHECK(contains(*device, "mgb_cudaMalloc(&d, 4)"));
  llvm::Expected<std::string> host = rewriteCode(
      std::string(kernel) + "int main(int n, char **) { int v[n] = {0}; return v[0]; }\n");
  CHECK_FALSE(static_cast<bool>(host));
  if (!host) llvm::consumeError(host.takeError());
}
