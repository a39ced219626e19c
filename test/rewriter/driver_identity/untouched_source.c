/* A host source with nothing for mgb to rewrite: mgb-cc compiles the driver's copy of it, and its
   warnings and __FILE__ must still name it as written (found building Darknet's examples). */
#include <stdio.h>

const char *where(void) { return __FILE__; }

int untouched(void) {
  int unused;
  return printf("%s:%d\n", where(), __LINE__);
}
