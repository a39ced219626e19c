// ProfileStore: the GPU memory peaks of programs' runs, per user and program, so that `mgb run`
// can start a program without --mem (docs/service.md, "Learned peaks"). A program is what the
// client names it (`mgb run`: its executable, and for interpreters the script or module); its
// arguments are a hint: a run with the same arguments gives its peak as it is, else the earlier
// run whose arguments are most alike lends its peak as a guess (the 16 latest argument lists per
// program are kept). A peak recorded while the run goes on (Merge::kRaise) only raises the entry
// and marks it partial: a partial entry is a guess too, until that run ends.
// Kept in a file of one line per entry, "user<TAB>program<TAB>peak bytes", where the program
// field holds "program<TAB>arguments" when there are arguments and the peak ends in "+" when
// partial, with backslash, tab, newline and carriage return escaped as \\ \t \n \r. Save appends
// the lines recorded since the last one (a later line wins on load) and rewrites the file whole
// (temporary file, then rename) only once superseded lines outnumber the entries, so a recorded
// peak costs one short write however large the store (state_file.h says which files are
// trusted). Thread-safe.
#ifndef MGB_SERVICE_SERVER_PROFILE_STORE_H
#define MGB_SERVICE_SERVER_PROFILE_STORE_H

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <map>
#include <vector>

#include "absl/status/status.h"

namespace mgb::server {

class ProfileStore {
 public:
  // path empty: in memory only. Otherwise loads the file if it exists; each line that cannot be
  // read (and a file that cannot be opened) adds one warning naming the file and line.
  explicit ProfileStore(std::string path, std::vector<std::string> *warnings = nullptr);

  struct Learned {
    uint64_t peak = 0;
    // A finished run with these very arguments; false: another run's peak, or a partial one.
    bool exact = false;
  };
  // arguments empty: the program alone is the key (no guess from other runs).
  std::optional<Learned> Lookup(const std::string &user, const std::string &program,
                                const std::string &arguments) const;
  std::optional<uint64_t> Lookup(const std::string &user, const std::string &program) const {
    auto learned = Lookup(user, program, "");
    return learned ? std::optional<uint64_t>(learned->peak) : std::nullopt;
  }
  enum class Merge {
    kReplace,  // a finished run's peak: the entry is that
    kRaise,    // a running program's peak so far: the entry is at least that, and partial
  };
  void Record(const std::string &user, const std::string &program, const std::string &arguments,
              uint64_t peak_bytes, Merge merge = Merge::kReplace);
  void Record(const std::string &user, const std::string &program, uint64_t peak_bytes) {
    Record(user, program, "", peak_bytes);
  }
  // Writes what was recorded since the last Save to the file (nothing without one); after a
  // failure, the next Save writes the file whole. Concurrent calls write one at a time.
  absl::Status Save();

  const std::string &path() const { return path_; }
  size_t size() const;

  // The file's escaping of one field, both ways (Unescape: empty on a bad escape).
  static std::string Escape(const std::string &text);
  static std::optional<std::string> Unescape(const std::string &text);

 private:
  struct Entry {
    uint64_t peak = 0;
    uint64_t seq = 0;  // recency: larger is later
    bool partial = false;
  };
  // user NUL program [TAB arguments]: user names have no NUL; a program's argument lists sort
  // together after its "user NUL program TAB" prefix.
  static std::string Key(const std::string &user, const std::string &program,
                         const std::string &arguments) {
    return user + '\0' + program + (arguments.empty() ? "" : "\t" + arguments);
  }
  void Load(std::vector<std::string> *warnings);
  // Under mu_: sets an entry and drops the program's oldest argument list past the limit.
  void Put(const std::string &key, uint64_t peak, bool partial);
  // The file's line for an entry.
  static std::string Line(const std::string &key, const Entry &entry);

  static constexpr size_t kCompactSlack = 1024;
  static constexpr size_t kArgumentListsPerProgram = 16;

  const std::string path_;
  mutable std::mutex mu_;
  std::map<std::string, Entry> peaks_;  // by Key(), ordered so a program's runs are adjacent
  uint64_t next_seq_ = 1;
  std::string unsaved_;    // lines recorded since the last Save
  size_t file_lines_ = 0;  // lines in the file, superseded ones included
  bool rewrite_ = false;   // the last Save failed: write the file whole
  std::mutex save_mu_;     // one Save at a time, so lines reach the file in order
};

}  // namespace mgb::server

#endif  // MGB_SERVICE_SERVER_PROFILE_STORE_H
