// ProfileStore: the GPU memory peak of each program's latest finished run, per (user, command
// line), so that `mgb run` can start a program without --mem (docs/service.md, "Learned peaks").
// Kept in a file of one line per entry, "user<TAB>command line<TAB>peak bytes", with backslash,
// tab, newline and carriage return escaped as \\ \t \n \r. Save appends the lines recorded since
// the last one (a later line wins on load) and rewrites the file whole (temporary file, then
// rename) only once superseded lines outnumber the entries, so a recorded peak costs one short
// write however large the store (state_file.h says which files are trusted). Thread-safe.
#ifndef MGB_SERVICE_SERVER_PROFILE_STORE_H
#define MGB_SERVICE_SERVER_PROFILE_STORE_H

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"

namespace mgb::server {

class ProfileStore {
 public:
  // path empty: in memory only. Otherwise loads the file if it exists; each line that cannot be
  // read (and a file that cannot be opened) adds one warning naming the file and line.
  explicit ProfileStore(std::string path, std::vector<std::string> *warnings = nullptr);

  std::optional<uint64_t> Lookup(const std::string &user, const std::string &profile_key) const;
  void Record(const std::string &user, const std::string &profile_key, uint64_t peak_bytes);
  // Writes what was recorded since the last Save to the file (nothing without one); after a
  // failure, the next Save writes the file whole. Concurrent calls write one at a time.
  absl::Status Save();

  const std::string &path() const { return path_; }
  size_t size() const;

  // The file's escaping of one field, both ways (Unescape: empty on a bad escape).
  static std::string Escape(const std::string &text);
  static std::optional<std::string> Unescape(const std::string &text);

 private:
  static std::string Key(const std::string &user, const std::string &profile_key) {
    return user + '\0' + profile_key;  // user names have no NUL
  }
  void Load(std::vector<std::string> *warnings);
  static std::string Line(const std::string &key, uint64_t peak);  // the file's line for an entry

  static constexpr size_t kCompactSlack = 1024;

  const std::string path_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, uint64_t> peaks_;  // by Key()
  std::string unsaved_;                              // lines recorded since the last Save
  size_t file_lines_ = 0;                            // lines in the file, superseded ones included
  bool rewrite_ = false;                             // the last Save failed: write the file whole
  std::mutex save_mu_;  // one Save at a time, so lines reach the file in order
};

}  // namespace mgb::server

#endif  // MGB_SERVICE_SERVER_PROFILE_STORE_H
