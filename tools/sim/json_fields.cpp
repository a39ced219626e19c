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

nlohmann::json ParseJsonFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open for reading");
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error &e) {
    throw InputError(path + ":" + LineAndColumn(text, e.byte == 0 ? 0 : e.byte - 1) +
                     ": not valid JSON (" + e.what() + ")");
  }
}

void WriteJsonFile(const nlohmann::json &json, const std::string &path) {
  std::ofstream out(path);
  if (!out) throw InputError(path + ": cannot open for writing");
  out << json.dump(1) << "\n";
  if (!out) throw InputError(path + ": write failed");
}

void Field::Fail(const std::string &what) const {
  throw InputError(file_ + ": " + (path_.empty() ? std::string("(top level)") : path_) + ": " +
                   what);
}

bool Field::Has(const char *key) const { return value_.is_object() && value_.contains(key); }

Field Field::operator[](const char *key) const {
  if (!value_.is_object()) Fail("must be an object");
  auto it = value_.find(key);
  const std::string child = path_.empty() ? key : path_ + "." + key;
  if (it == value_.end()) Field(value_, file_, child).Fail("missing");
  return Field(*it, file_, child);
}

Field Field::operator[](size_t index) const {
  return Field(value_.at(index), file_, path_ + "[" + std::to_string(index) + "]");
}

size_t Field::ArraySize() const {
  if (!value_.is_array()) Fail("must be an array");
  return value_.size();
}

void Field::OnlyKeys(std::initializer_list<const char *> known) const {
  if (!value_.is_object()) Fail("must be an object");
  for (auto it = value_.begin(); it != value_.end(); ++it) {
    bool found = false;
    for (const char *key : known) found = found || it.key() == key;
    if (!found) {
      std::string list;
      for (const char *key : known) list += (list.empty() ? "" : ", ") + std::string(key);
      Fail("unknown field \"" + it.key() + "\" (known: " + list + ")");
    }
  }
}

double Field::Number() const {
  if (!value_.is_number()) Fail("must be a number");
  const double v = value_.get<double>();
  if (!std::isfinite(v)) Fail("must be finite");
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
    if (v < 0) Fail("must not be negative");
    return static_cast<uint64_t>(v);
  }
  if (value_.is_number_float()) {
    const double v = value_.get<double>();
    if (v >= 0 && v < 1.8e19 && v == std::floor(v)) return static_cast<uint64_t>(v);
  }
  Fail("must be a non-negative integer");
}

std::string Field::String() const {
  if (!value_.is_string()) Fail("must be a string");
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
