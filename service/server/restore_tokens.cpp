#include "restore_tokens.h"

#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "mgb/core/error_reason.h"
#include "random_bytes.h"
#include "state_file.h"

namespace mgb::server {
namespace {

constexpr size_t kTokenBytes = 8 + 8 + 16;  // epoch, task id, MAC

uint64_t Rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

// SipHash-2-4 (Aumasson and Bernstein) of `data` under the key (k0, k1).
uint64_t SipHash24(uint64_t k0, uint64_t k1, const std::string &data) {
  uint64_t v0 = 0x736f6d6570736575ULL ^ k0, v1 = 0x646f72616e646f6dULL ^ k1;
  uint64_t v2 = 0x6c7967656e657261ULL ^ k0, v3 = 0x7465646279746573ULL ^ k1;
  const auto round = [&] {
    v0 += v1, v1 = Rotl(v1, 13), v1 ^= v0, v0 = Rotl(v0, 32);
    v2 += v3, v3 = Rotl(v3, 16), v3 ^= v2;
    v0 += v3, v3 = Rotl(v3, 21), v3 ^= v0;
    v2 += v1, v1 = Rotl(v1, 17), v1 ^= v2, v2 = Rotl(v2, 32);
  };
  const size_t whole = data.size() / 8 * 8;
  for (size_t i = 0; i < whole; i += 8) {
    uint64_t m = 0;
    for (int b = 0; b < 8; ++b) m |= uint64_t{static_cast<unsigned char>(data[i + b])} << (8 * b);
    v3 ^= m;
    round(), round();
    v0 ^= m;
  }
  uint64_t last = uint64_t{data.size() & 0xff} << 56;
  for (size_t b = 0; whole + b < data.size(); ++b) {
    last |= uint64_t{static_cast<unsigned char>(data[whole + b])} << (8 * b);
  }
  v3 ^= last;
  round(), round();
  v0 ^= last;
  v2 ^= 0xff;
  round(), round(), round(), round();
  return v0 ^ v1 ^ v2 ^ v3;
}

void PutU64(std::string *out, uint64_t v) {
  for (int b = 0; b < 8; ++b) out->push_back(static_cast<char>((v >> (8 * b)) & 0xff));
}

uint64_t GetU64(const std::string &in, size_t at) {
  uint64_t v = 0;
  for (int b = 0; b < 8; ++b) v |= uint64_t{static_cast<unsigned char>(in[at + b])} << (8 * b);
  return v;
}

std::array<uint64_t, 4> RandomKey() {
  std::array<uint64_t, 4> key{};
  FillRandom(key.data(), sizeof key);
  return key;
}

absl::Status Denied(const std::string &why) {
  return core::Refusal(core::ErrorReason::kPermissionDenied, "restore refused: " + why);
}

}  // namespace

RestoreTokens RestoreTokens::Open(const std::string &path, std::vector<std::string> *warnings) {
  if (path.empty()) return RestoreTokens(RandomKey(), 1);
  // "epoch<TAB>key as 4 hex words"
  std::array<uint64_t, 4> key{};
  uint64_t last_epoch = 0;
  absl::StatusOr<std::string> text = ReadStateFile(path);
  bool read = false;
  if (text.ok()) {
    std::vector<std::string> fields =
        absl::StrSplit(absl::StripTrailingAsciiWhitespace(*text), '\t');
    read = fields.size() == 5 && absl::SimpleAtoi(fields[0], &last_epoch);
    for (size_t i = 0; read && i < 4; ++i) read = absl::SimpleHexAtoi(fields[i + 1], &key[i]);
    if (!read) warnings->push_back(absl::StrCat(path, ":1: not \"epoch<TAB>key\"; a new key"));
  } else if (!absl::IsNotFound(text.status())) {
    warnings->push_back(absl::StrCat(text.status().message(), " (no restore from before)"));
  }
  if (!read) {
    key = RandomKey();
    last_epoch = 0;
  }
  RestoreTokens tokens(key, last_epoch + 1);
  std::string line = absl::StrCat(tokens.epoch_);
  for (uint64_t word : key) absl::StrAppend(&line, "\t", absl::Hex(word, absl::kZeroPad16));
  if (absl::Status saved = ReplaceStateFile(path, line + "\n"); !saved.ok()) {
    warnings->push_back(
        absl::StrCat(saved.message(), " (what this mgbd grants cannot be restored after it)"));
  }
  return tokens;
}

std::string RestoreTokens::Mac(uint64_t epoch, uint64_t task, int gpu, uint64_t bytes,
                               const std::string &user) const {
  std::string message;
  PutU64(&message, epoch);
  PutU64(&message, task);
  PutU64(&message, static_cast<uint64_t>(static_cast<int64_t>(gpu)));
  PutU64(&message, bytes);
  message += user;
  std::string mac;
  PutU64(&mac, SipHash24(key_[0], key_[1], message));
  PutU64(&mac, SipHash24(key_[2], key_[3], message));
  return mac;
}

std::string RestoreTokens::Issue(uint64_t task, int gpu, uint64_t bytes,
                                 const std::string &user) const {
  std::string token;
  PutU64(&token, epoch_);
  PutU64(&token, task);
  return token + Mac(epoch_, task, gpu, bytes, user);
}

absl::Status RestoreTokens::Redeem(const std::string &token, int gpu, uint64_t bytes,
                                   const std::string &user) {
  if (token.size() != kTokenBytes) return Denied("no restore token from the mgbd before");
  const uint64_t epoch = GetU64(token, 0), task = GetU64(token, 8);
  if (epoch + 1 != epoch_) {
    return Denied(absl::StrCat("a token of mgbd epoch ", epoch, "; only epoch ", epoch_ - 1,
                               ", the mgbd before this one, can be restored"));
  }
  const std::string mac = Mac(epoch, task, gpu, bytes, user);
  // Compared in full whatever differs first: the time says nothing about the MAC.
  unsigned char differs = 0;
  for (size_t i = 0; i < mac.size(); ++i) differs |= mac[i] ^ token[16 + i];
  if (differs != 0) return Denied("the token does not match the GPU, bytes or user named");
  if (!redeemed_.insert(task).second) return Denied("this grant was restored already");
  return absl::OkStatus();
}

}  // namespace mgb::server
