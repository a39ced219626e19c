// Reading JSON objects field by field with errors that name the file and the field's path
// ("trace.json: jobs[3].tasks[0].solo_s: must be > 0"), shared by every JSON reader in sim/.
#ifndef MGB_TOOLS_SIM_JSON_FIELDS_H
#define MGB_TOOLS_SIM_JSON_FIELDS_H

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace mgb::sim {

// Thrown by readers in sim/; the command turns it into one line on stderr and exit status 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses a whole file; a syntax error names the file, line and column.
nlohmann::json ParseJsonFile(const std::string &path);
// Writes `json` (one space indent) and a newline; throws InputError naming the file on failure.
void WriteJsonFile(const nlohmann::json &json, const std::string &path);

// A JSON value with its place: the file it came from and the path to it.
class Field {
 public:
  Field(const nlohmann::json &value, std::string file, std::string path)
      : value_(value), file_(std::move(file)), path_(std::move(path)) {}

  const nlohmann::json &value() const { return value_; }
  const std::string &path() const { return path_; }

  [[noreturn]] void Fail(const std::string &what) const;

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
  const nlohmann::json &value_;
  std::string file_;
  std::string path_;
};

}  // namespace mgb::sim

#endif  // MGB_TOOLS_SIM_JSON_FIELDS_H
