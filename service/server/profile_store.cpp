#include "profile_store.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "atomic_file.h"

namespace mgb::server {

ProfileStore::ProfileStore(std::string path, std::vector<std::string> *warnings)
    : path_(std::move(path)) {
  if (!path_.empty()) Load(warnings);
}

std::string ProfileStore::Escape(const std::string &text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      default: out += c;
    }
  }
  return out;
}

std::optional<std::string> ProfileStore::Unescape(const std::string &text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\') {
      out += text[i];
      continue;
    }
    if (++i == text.size()) return std::nullopt;
    switch (text[i]) {
      case '\\': out += '\\'; break;
      case 't': out += '\t'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      default: return std::nullopt;
    }
  }
  return out;
}

void ProfileStore::Load(std::vector<std::string> *warnings) {
  auto warn = [&](std::string text) {
    if (warnings != nullptr) warnings->push_back(std::move(text));
  };
  std::ifstream in(path_);
  if (!in) {
    // No file yet is the first start; anything else is worth a word (the store starts empty).
    if (errno != ENOENT) warn(absl::StrCat(path_, ": cannot read (", std::strerror(errno), ")"));
    return;
  }
  std::string line;
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const size_t first = line.find('\t');
    const size_t second = first == std::string::npos ? first : line.find('\t', first + 1);
    std::optional<std::string> user, key;
    uint64_t peak = 0;
    bool ok = second != std::string::npos && line.find('\t', second + 1) == std::string::npos;
    if (ok) {
      user = Unescape(line.substr(0, first));
      key = Unescape(line.substr(first + 1, second - first - 1));
      const char *begin = line.data() + second + 1, *end = line.data() + line.size();
      const auto [rest, error] = std::from_chars(begin, end, peak);
      ok = user && key && !key->empty() && begin != end && rest == end && error == std::errc();
    }
    if (!ok) {
      warn(absl::StrCat(path_, ":", number,
                        ": not \"user<TAB>command line<TAB>peak bytes\"; line skipped"));
      continue;
    }
    peaks_[Key(*user, *key)] = peak;
  }
}

std::optional<uint64_t> ProfileStore::Lookup(const std::string &user,
                                             const std::string &profile_key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = peaks_.find(Key(user, profile_key));
  if (it == peaks_.end()) return std::nullopt;
  return it->second;
}

void ProfileStore::Record(const std::string &user, const std::string &profile_key,
                          uint64_t peak_bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  peaks_[Key(user, profile_key)] = peak_bytes;
}

size_t ProfileStore::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return peaks_.size();
}

absl::Status ProfileStore::Save() {
  if (path_.empty()) return absl::OkStatus();
  std::lock_guard<std::mutex> saving(save_mu_);
  std::vector<std::string> lines;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto &[key, peak] : peaks_) {
      const size_t nul = key.find('\0');
      lines.push_back(absl::StrCat(Escape(key.substr(0, nul)), "\t", Escape(key.substr(nul + 1)),
                                   "\t", peak, "\n"));
    }
  }
  std::sort(lines.begin(), lines.end());  // a stable file for people and diffs
  std::string text;
  for (const std::string &line : lines) text += line;
  return ReplaceFileAtomically(path_, text);
}

}  // namespace mgb::server
