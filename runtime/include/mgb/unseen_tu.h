/* Included into a translation unit holding code mgb cannot see or route: a unit mgb-nvcc or
 * mgb-cc compiled as written because Clang could not parse it, or one whose rewrite left a
 * launch untouched (a header outside --root, a launch spelled across macros). Such code may be
 * handed any device pointer, so at start-up the unit tells libmgb, which then binds every
 * allocation eagerly (real at once, one task for the process: docs/runtime.md) and hands out no
 * stand-in. Valid C and C++ (gcc, g++, nvcc); each unit registers itself once. */
#ifndef MGB_RUNTIME_UNSEEN_TU_H
#define MGB_RUNTIME_UNSEEN_TU_H

#ifdef __cplusplus
extern "C"
#endif
    void
    mgb_note_unseen_code(const char *file);

__attribute__((constructor)) static void mgb_unseen_tu_register(void) {
  mgb_note_unseen_code(__FILE__);
}

#endif /* MGB_RUNTIME_UNSEEN_TU_H */
