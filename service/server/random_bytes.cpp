#include "random_bytes.h"

#include <sys/random.h>

namespace mgb::server {

void FillRandom(void *data, size_t size) {
  auto *bytes = static_cast<unsigned char *>(data);
  size_t got = 0;
  while (got < size) {
    const ssize_t n = getrandom(bytes + got, size - got, 0);
    if (n > 0) got += static_cast<size_t>(n);
  }
}

}  // namespace mgb::server
