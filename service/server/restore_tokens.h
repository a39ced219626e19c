// Restore tokens: proof that a GPU reservation a program brings back to a restarted mgbd
// (AttachRequest.restore) was granted by the mgbd just before it (issue 32, item 3).
//
// Without them any local client could "restore" whatever it liked at any time: a 16 GiB GPU
// showed 104 GiB reserved, and a restored task overtook waiting ones. Now each placement (and
// each grow) comes with a token: the mgbd's epoch, the task id, and a MAC (SipHash-2-4, 128
// bits) of those with the GPU, the bytes and the user, under a secret only mgbd's user can read
// (a state file, state_file.h). Each start reads the secret and the last epoch and writes the
// epoch + 1; a restore is accepted only with a token of the epoch before (this mgbd's
// predecessor), for exactly the GPU, bytes and user it names, once.
#ifndef MGB_SERVICE_SERVER_RESTORE_TOKENS_H
#define MGB_SERVICE_SERVER_RESTORE_TOKENS_H

#include <array>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace mgb::server {

class RestoreTokens {
 public:
  // The secret and the last epoch from `path`, created when missing; this mgbd's epoch is the
  // next, written back. path "": a fresh secret in memory (no predecessor's token is accepted).
  // Problems (an untrusted or unwritable file) add a warning and leave the tokens in memory.
  static RestoreTokens Open(const std::string &path, std::vector<std::string> *warnings);

  // The token for task `task` placed on `gpu` with `bytes` reserved, for `user`.
  std::string Issue(uint64_t task, int gpu, uint64_t bytes, const std::string &user) const;
  // OK when `token` is the predecessor's for exactly these and was not redeemed before (then it
  // is used up); PERMISSION_DENIED saying why not.
  absl::Status Redeem(const std::string &token, int gpu, uint64_t bytes, const std::string &user);

  uint64_t epoch() const { return epoch_; }

 private:
  RestoreTokens(std::array<uint64_t, 4> key, uint64_t epoch) : key_(key), epoch_(epoch) {}
  std::string Mac(uint64_t epoch, uint64_t task, int gpu, uint64_t bytes,
                  const std::string &user) const;

  std::array<uint64_t, 4> key_;  // two SipHash keys of 128 bits
  uint64_t epoch_;
  std::set<uint64_t> redeemed_;  // the predecessor's task ids already restored
};

}  // namespace mgb::server

#endif  // MGB_SERVICE_SERVER_RESTORE_TOKENS_H
