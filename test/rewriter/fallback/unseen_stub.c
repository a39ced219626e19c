/* Stands in for libmgb's mgb_note_unseen_code until libmgb defines it: weak, so that libmgb's own
 * definition wins once it exists (test: rewriter.driver_fallback links a TU compiled as written). */
#include <stdio.h>

__attribute__((weak)) void mgb_note_unseen_code(const char *file) {
  fprintf(stderr, "unseen code: %s\n", file);
}
