// Reading JSON objects field by field with errors that name the file and the field's path
// ("trace.json: jobs[3].tasks[0].solo_s: must be > 0"), shared by every JSON reader in sim/.
#ifndef MGB_TOOLS_SIM_JSON_FIELDS_H
#define MGB_TOOLS_SIM_JSON_FIELDS_H

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace mgb::sim {

// Parses a whole file: NotFound when it cannot be opened, InvalidArgument naming the file, line
// and column of a syntax error.
absl::StatusOr<nlohmann::json> ParseJsonFile(const std::string &path);
// Writes `json` (one space indent) and a newline; Unavailable naming the file on failure.
absl::Status WriteJsonFile(const nlohmann::json &json, const std::string &path);

// A JSON value with its place: the file it came from and the path to it.
//
// A reader takes fields from one root Field and checks the root's status() once at the end: the
// first failure is kept, as if reading had stopped there. A failed read returns a default (0, "",
// a null member), and after a failure every array reads as empty, so the rest of the reader runs
// through quickly and its later failures, which follow from the first, are dropped.
class Field {
 public:
  // The top level of `value`, read from `file`.
  Field(const nlohmann::json &value, const std::string &file);

  const nlohmann::json &value() const { return value_; }
  const std::string &path() const { return path_; }

  // OK, or InvalidArgument "<file>: <path>: <what>" of the first failure of this Field's reader.
  const absl::Status &status() const { return read_->first_failure; }
  bool ok() const { return read_->first_failure.ok(); }
  // Records the failure of this field, unless the reader failed before.
  void Fail(const std::string &what) const;

  bool Has(const char *key) const;
  Field operator[](const char *key) const;  // a required member of an object
  Field operator[](size_t index) const;     // an element of an array
  size_t ArraySize() const;                 // fails unless an array
  // Fails on members other than `known` (catches misspelt fields).
  void OnlyKeys(std::initializer_list<const char *> known) const;

  double Number() const;
  double NumberAtLeast(double min) const;
  double NumberIn(double min, double max) const;
  uint64_t Unsigned() const;
  std::string String() const;

  // Optional members, with a default when absent.
  double Number(const char *key, double fallback) const;
  uint64_t Unsigned(const char *key, uint64_t fallback) const;
  std::string String(const char *key, const std::string &fallback) const;

 private:
  // What every Field taken from one root shares.
  struct Read {
    std::string file;
    absl::Status first_failure;
  };

  Field(const nlohmann::json &value, std::string path, std::shared_ptr<Read> read)
      : value_(value), path_(std::move(path)), read_(std::move(read)) {}
  // A member or element that is not there: null, so that reading it fails too.
  Field Absent(std::string path) const;

  const nlohmann::json &value_;
  std::string path_;
  std::shared_ptr<Read> read_;
};

}  // namespace mgb::sim

#endif  // MGB_TOOLS_SIM_JSON_FIELDS_H
