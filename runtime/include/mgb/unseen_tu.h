/* mgb/unseen_tu.h: marks a translation unit whose code mgb-rewrite did not (fully) rewrite.
 *
 * mgb-nvcc, mgb-cc and mgb-c++ compile a source that clang cannot parse as written, with
 * `-include mgb/unseen_tu.h`; mgb-rewrite includes it in a rewritten file where it could not bind
 * a call's device memory (a library call in a C file). Code that was not rewritten may receive
 * device pointers, and libmgb's stand-in pointers must never reach it: a static constructor tells
 * libmgb before main() (mgb_note_unseen_code), which then binds device memory eagerly for the
 * whole process. The program must be linked with libmgb (mgb-config --libs).
 *
 * Valid C and C++ (gcc, g++, nvcc); declares its one libmgb function itself. */
#ifndef MGB_UNSEEN_TU_H
#define MGB_UNSEEN_TU_H

#ifdef __cplusplus
extern "C" {
#endif

/* libmgb: code of `file` runs without mgb's rewrite; called from static constructors, possibly
 * before any other libmgb call and before libmgb's own static objects are constructed. */
#ifndef MGB_NOTE_UNSEEN_CODE_DECLARED /* also declared by mgb/mgb.h (-Wredundant-decls) */
#define MGB_NOTE_UNSEEN_CODE_DECLARED
void mgb_note_unseen_code(const char *mgb_file);
#endif

#ifdef __cplusplus
}
#endif

/* __BASE_FILE__ names the source being compiled (__FILE__ here would name this header). */
#ifdef __BASE_FILE__
#define MGB_UNSEEN_TU_FILE __BASE_FILE__
#else
#define MGB_UNSEEN_TU_FILE __FILE__
#endif

__attribute__((constructor, used)) static void mgb_unseen_tu_note(void) {
  mgb_note_unseen_code(MGB_UNSEEN_TU_FILE);
}

#endif /* MGB_UNSEEN_TU_H */
