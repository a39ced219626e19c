// Secrets from the kernel's random source (getrandom), for session keys and the restore key.
#ifndef MGB_SERVICE_SERVER_RANDOM_BYTES_H
#define MGB_SERVICE_SERVER_RANDOM_BYTES_H

#include <cstddef>

namespace mgb::server {

// Fills `size` bytes at `data`, retrying short reads and interruptions.
void FillRandom(void *data, size_t size);

}  // namespace mgb::server

#endif  // MGB_SERVICE_SERVER_RANDOM_BYTES_H
