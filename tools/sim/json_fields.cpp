#include "json_fields.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace mgb::sim {
namespace {

// nlohmann reports a byte offset; people want a line and column.
std::string LineAndColumn(const std::string &text, size_t byte) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return std::to_string(line) + ":" + std::to_string(column);
}

std::string Num(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

}  // namespace

absl::StatusOr<nlohmann::json> ParseJsonFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(path + ": cannot open for reading");
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error &e) {
    return absl::InvalidArgumentError(path + ":" +
                                      LineAndColumn(text, e.byte == 0 ? 0 : e.byte - 1) +
                                      ": not valid JSON (" + e.what() + ")");
  } catch (const nlohmann::json::out_of_range &e) {  // a number no double holds (1e400)
    return absl::InvalidArgumentError(path + ": not valid JSON (" + e.what() + ")");
  }
}

absl::Status WriteJsonFile(const nlohmann::json &json, const std::string &path) {
  std::ofstream out(path);
  if (!out) return absl::UnavailableError(path + ": cannot open for writing");
  out << json.dump(1) << "\n";
  if (!out) return absl::UnavailableError(path + ": write failed");
  return absl::OkStatus();
}

Field::Field(const nlohmann::json &value, const std::string &file)
    : Field(value, "", std::make_shared<Read>(Read{file, absl::OkStatus()})) {}

void Field::Fail(const std::string &what) const {
  if (!ok()) return;
  read_->first_failure = absl::InvalidArgumentError(
      read_->file + ": " + (path_.empty() ? std::string("(top level)") : path_) + ": " + what);
}

Field Field::Absent(std::string path) const {
  static const nlohmann::json kNull;
  return Field(kNull, std::move(path), read_);
}

bool Field::Has(const char *key) const { return value_.is_object() && value_.contains(key); }

Field Field::operator[](const char *key) const {
  const std::string child = path_.empty() ? key : path_ + "." + key;
  if (!value_.is_object()) {
    Fail("must be an object");
    return Absent(child);
  }
  auto it = value_.find(key);
  if (it == value_.end()) {
    Field missing = Absent(child);
    missing.Fail("missing");
    return missing;
  }
  return Field(*it, child, read_);
}

Field Field::operator[](size_t index) const {
  const std::string child = path_ + "[" + std::to_string(index) + "]";
  // Only after a failure (a reader takes indices below ArraySize()): read on as null.
  if (!value_.is_array() || index >= value_.size()) return Absent(child);
  return Field(value_[index], child, read_);
}

size_t Field::ArraySize() const {
  if (!value_.is_array()) {
    Fail("must be an array");
    return 0;
  }
  return ok() ? value_.size() : 0;
}

void Field::OnlyKeys(std::initializer_list<const char *> known) const {
  if (!value_.is_object()) {
    Fail("must be an object");
    return;
  }
  for (auto it = value_.begin(); it != value_.end(); ++it) {
    bool found = false;
    for (const char *key : known) found = found || it.key() == key;
    if (!found) {
      std::string list;
      for (const char *key : known) list += (list.empty() ? "" : ", ") + std::string(key);
      Fail("unknown field \"" + it.key() + "\" (known: " + list + ")");
      return;
    }
  }
}

double Field::Number() const {
  if (!value_.is_number()) {
    Fail("must be a number");
    return 0.0;
  }
  const double v = value_.get<double>();
  if (!std::isfinite(v)) {
    Fail("must be finite");
    return 0.0;
  }
  return v;
}

double Field::NumberAtLeast(double min) const {
  const double v = Number();
  if (v < min) Fail("must be >= " + Num(min) + ", got " + Num(v));
  return v;
}

double Field::NumberIn(double min, double max) const {
  const double v = Number();
  if (v < min || v > max) {
    Fail("must be in [" + Num(min) + ", " + Num(max) + "], got " + Num(v));
  }
  return v;
}

uint64_t Field::Unsigned() const {
  if (value_.is_number_unsigned()) return value_.get<uint64_t>();
  if (value_.is_number_integer()) {
    const int64_t v = value_.get<int64_t>();
    if (v >= 0) return static_cast<uint64_t>(v);
    Fail("must not be negative");
    return 0;
  }
  if (value_.is_number_float()) {
    const double v = value_.get<double>();
    if (v >= 0 && v < 1.8e19 && v == std::floor(v)) return static_cast<uint64_t>(v);
  }
  Fail("must be a non-negative integer");
  return 0;
}

std::string Field::String() const {
  if (!value_.is_string()) {
    Fail("must be a string");
    return "";
  }
  return value_.get<std::string>();
}

double Field::Number(const char *key, double fallback) const {
  return Has(key) ? (*this)[key].Number() : fallback;
}

uint64_t Field::Unsigned(const char *key, uint64_t fallback) const {
  return Has(key) ? (*this)[key].Unsigned() : fallback;
}

std::string Field::String(const char *key, const std::string &fallback) const {
  return Has(key) ? (*this)[key].String() : fallback;
}

}  // namespace mgb::sim
