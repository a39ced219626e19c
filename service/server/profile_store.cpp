#include "profile_store.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "state_file.h"

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
  absl::StatusOr<std::string> text = ReadStateFile(path_);
  if (!text.ok()) {
    // No file yet is the first start; anything else is worth a word (the store starts empty).
    if (!absl::IsNotFound(text.status())) {
      warn(absl::StrCat(text.status().message(), " (learned peaks start empty)"));
    }
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  // A line cut short (mgbd died mid-append) would swallow the next one appended: rewrite.
  rewrite_ = !text->empty() && text->back() != '\n';
  size_t number = 0;
  for (const absl::string_view line : absl::StrSplit(*text, '\n')) {
    ++number;
    if (line.empty()) continue;
    ++file_lines_;
    const size_t first = line.find('\t');
    const size_t second = first == line.npos ? first : line.find('\t', first + 1);
    std::optional<std::string> user, key;
    uint64_t peak = 0;
    bool ok = second != line.npos && line.find('\t', second + 1) == line.npos;
    if (ok) {
      user = Unescape(std::string(line.substr(0, first)));
      key = Unescape(std::string(line.substr(first + 1, second - first - 1)));
      const char *begin = line.data() + second + 1, *end = line.data() + line.size();
      const auto [rest, error] = std::from_chars(begin, end, peak);
      ok = user && key && !key->empty() && begin != end && rest == end && error == std::errc();
    }
    if (!ok) {
      warn(absl::StrCat(path_, ":", number,
                        ": not \"user<TAB>command line<TAB>peak bytes\"; line skipped"));
      rewrite_ = true;  // the next Save leaves it out
      continue;
    }
    peaks_[Key(*user, *key)] = peak;  // a later line (a later run) wins
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
  if (!path_.empty()) unsaved_ += Line(Key(user, profile_key), peak_bytes);
}

std::string ProfileStore::Line(const std::string &key, uint64_t peak) {
  const size_t nul = key.find('\0');
  return absl::StrCat(Escape(key.substr(0, nul)), "\t", Escape(key.substr(nul + 1)), "\t", peak,
                      "\n");
}

size_t ProfileStore::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return peaks_.size();
}

absl::Status ProfileStore::Save() {
  if (path_.empty()) return absl::OkStatus();
  std::lock_guard<std::mutex> saving(save_mu_);
  std::string appended, whole;
  size_t entries = 0;
  bool compacting = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (unsaved_.empty() && !rewrite_) return absl::OkStatus();
    file_lines_ += static_cast<size_t>(std::count(unsaved_.begin(), unsaved_.end(), '\n'));
    appended.swap(unsaved_);
    // Superseded lines are dropped once they outnumber the entries (and a few more).
    compacting = rewrite_ || file_lines_ > 2 * peaks_.size() + kCompactSlack;
    if (compacting) {
      std::vector<std::string> lines;
      for (const auto &[key, peak] : peaks_) lines.push_back(Line(key, peak));
      std::sort(lines.begin(), lines.end());  // a stable file for people and diffs
      for (const std::string &line : lines) whole += line;
      entries = lines.size();
    }
  }
  absl::Status saved =
      compacting ? ReplaceStateFile(path_, whole) : AppendStateFile(path_, appended);
  std::lock_guard<std::mutex> lock(mu_);
  if (saved.ok() && compacting) file_lines_ = entries;
  // What did not reach the file is written whole next time.
  rewrite_ = !saved.ok();
  return saved;
}

}  // namespace mgb::server
