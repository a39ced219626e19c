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
    std::optional<std::string> user, program;
    uint64_t peak = 0;
    bool partial = false;
    bool ok = second != line.npos && line.find('\t', second + 1) == line.npos;
    if (ok) {
      user = Unescape(std::string(line.substr(0, first)));
      program = Unescape(std::string(line.substr(first + 1, second - first - 1)));
      const char *begin = line.data() + second + 1, *end = line.data() + line.size();
      partial = begin != end && end[-1] == '+';
      if (partial) --end;
      const auto [rest, error] = std::from_chars(begin, end, peak);
      ok = user && program && !program->empty() && (*program)[0] != '\t' && begin != end &&
           rest == end && error == std::errc();
    }
    if (!ok) {
      warn(absl::StrCat(path_, ":", number,
                        ": not \"user<TAB>program<TAB>peak bytes\"; line skipped"));
      rewrite_ = true;  // the next Save leaves it out
      continue;
    }
    Put(*user + '\0' + *program, peak, partial);  // a later line (a later run) wins
  }
}

namespace {

// How alike two argument lists are: words equal in the same place, less the difference in length.
int Likeness(absl::string_view a, absl::string_view b) {
  const std::vector<absl::string_view> x = absl::StrSplit(a, ' ');
  const std::vector<absl::string_view> y = absl::StrSplit(b, ' ');
  int same = 0;
  for (size_t i = 0; i < std::min(x.size(), y.size()); ++i) same += x[i] == y[i] ? 1 : 0;
  return 2 * same -
         static_cast<int>(x.size() > y.size() ? x.size() - y.size() : y.size() - x.size());
}

}  // namespace

std::optional<ProfileStore::Learned> ProfileStore::Lookup(const std::string &user,
                                                          const std::string &program,
                                                          const std::string &arguments) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = peaks_.find(Key(user, program, arguments)); it != peaks_.end()) {
    return Learned{it->second.peak, !it->second.partial};
  }
  if (arguments.empty()) return std::nullopt;
  // The run of this program whose arguments are most alike; the latest among equals.
  const std::string prefix = Key(user, program, "") + '\t';
  const Entry *best = nullptr;
  int best_likeness = 0;
  for (auto it = peaks_.lower_bound(prefix); it != peaks_.end() && it->first.starts_with(prefix);
       ++it) {
    const int likeness = Likeness(arguments, absl::string_view(it->first).substr(prefix.size()));
    if (best == nullptr || likeness > best_likeness ||
        (likeness == best_likeness && it->second.seq > best->seq)) {
      best = &it->second;
      best_likeness = likeness;
    }
  }
  if (best == nullptr) return std::nullopt;
  return Learned{best->peak, false};
}

void ProfileStore::Record(const std::string &user, const std::string &program,
                          const std::string &arguments, uint64_t peak_bytes, Merge merge) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string key = Key(user, program, arguments);
  bool partial = false;
  if (merge == Merge::kRaise) {
    auto it = peaks_.find(key);
    if (it != peaks_.end() && it->second.peak >= peak_bytes) return;  // nothing new to keep
    partial = true;
  }
  Put(key, peak_bytes, partial);
  if (!path_.empty()) unsaved_ += Line(key, peaks_.at(key));
}

void ProfileStore::Put(const std::string &key, uint64_t peak, bool partial) {
  peaks_[key] = Entry{peak, next_seq_++, partial};
  const size_t tab = key.find('\t');
  if (tab == key.npos) return;
  // At most kArgumentListsPerProgram of one program: a seed or an output path in the arguments
  // would otherwise add an entry every run.
  const std::string prefix = key.substr(0, tab + 1);
  size_t count = 0;
  auto oldest = peaks_.end();
  for (auto it = peaks_.lower_bound(prefix); it != peaks_.end() && it->first.starts_with(prefix);
       ++it) {
    ++count;
    if (oldest == peaks_.end() || it->second.seq < oldest->second.seq) oldest = it;
  }
  if (count > kArgumentListsPerProgram) peaks_.erase(oldest);
}

std::string ProfileStore::Line(const std::string &key, const Entry &entry) {
  const size_t nul = key.find('\0');
  return absl::StrCat(Escape(key.substr(0, nul)), "\t", Escape(key.substr(nul + 1)), "\t",
                      entry.peak, entry.partial ? "+" : "", "\n");
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
      // Oldest first: loading the file again gives the same recency order.
      std::vector<std::pair<uint64_t, std::string>> lines;
      for (const auto &[key, entry] : peaks_) lines.emplace_back(entry.seq, Line(key, entry));
      std::sort(lines.begin(), lines.end());
      for (const auto &line : lines) whole += line.second;
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
