#include "flags.h"

#include <charconv>
#include <cstdio>

#include "mgb/core/byte_size.h"

namespace mgb::cli {

FlagParser::FlagParser(std::string command, std::string usage)
    : command_(std::move(command)), usage_(std::move(usage)) {}

void FlagParser::String(std::string name, std::string *out, std::string help) {
  flags_.push_back({std::move(name), std::move(help), "VALUE", true,
                    [out](const std::string &v) -> std::optional<std::string> {
                      *out = v;
                      return std::nullopt;
                    }});
}

void FlagParser::Bool(std::string name, bool *out, std::string help) {
  flags_.push_back({std::move(name), std::move(help), "", false,
                    [out](const std::string &) -> std::optional<std::string> {
                      *out = true;
                      return std::nullopt;
                    }});
}

void FlagParser::Int(std::string name, int64_t *out, std::string help) {
  flags_.push_back({std::move(name), std::move(help), "N", true,
                    [out](const std::string &v) -> std::optional<std::string> {
                      int64_t n = 0;
                      auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
                      if (ec != std::errc() || end != v.data() + v.size()) {
                        return "expects a whole number, got '" + v + "'";
                      }
                      *out = n;
                      return std::nullopt;
                    }});
}

void FlagParser::Size(std::string name, uint64_t *out, std::string help) {
  flags_.push_back({std::move(name), std::move(help), "SIZE", true,
                    [out](const std::string &v) -> std::optional<std::string> {
                      std::optional<uint64_t> bytes = core::ParseByteSize(v);
                      if (!bytes) {
                        return "expects a size like 512M, 10G, 100GiB or a byte count, got '" + v +
                               "'";
                      }
                      *out = *bytes;
                      return std::nullopt;
                    }});
}

void FlagParser::Value(std::string name, std::string value_name, std::string help,
                       std::function<std::optional<std::string>(const std::string &)> set) {
  flags_.push_back({std::move(name), std::move(help), std::move(value_name), true, std::move(set)});
}

std::string FlagParser::Help() const {
  std::string text = "Usage: " + usage_ + "\n\nFlags:\n";
  auto line = [&text](std::string left, const std::string &help) {
    if (left.size() < 28) left.resize(28, ' ');
    text += left + " " + help + "\n";
  };
  for (const Flag &f : flags_)
    line("  --" + f.name + (f.takes_value ? " " + f.value_name : ""), f.help);
  line("  --help", "print this help and exit");
  line("  --version", "print mgb's version and exit");
  return text;
}

int FlagParser::Fail(const std::string &message) const {
  std::fprintf(stderr, "%s: %s (see %s --help)\n", command_.c_str(), message.c_str(),
               command_.c_str());
  return 2;
}

std::string FlagParser::VersionLine() const { return command_ + " " + MGB_VERSION; }

FlagParser::Outcome FlagParser::ParseQuietly(int argc, char **argv,
                                             std::vector<std::string> *rest) {
  Outcome outcome;
  auto fail = [&outcome](std::string message) {
    outcome.error = std::move(message);
    return outcome;
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      if (rest == nullptr) return fail("unexpected '--'");
      for (++i; i < argc; ++i) rest->emplace_back(argv[i]);
      break;
    }
    if (arg == "--help" || arg == "-h") {
      outcome.help = true;
      return outcome;
    }
    if (arg == "--version") {
      outcome.version = true;
      return outcome;
    }
    if (!arg.starts_with("--")) {
      if (rest == nullptr) return fail("unexpected argument '" + arg + "'");
      rest->push_back(arg);
      continue;
    }
    std::string name = arg.substr(2);
    std::optional<std::string> value;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    const Flag *flag = nullptr;
    for (const Flag &f : flags_) {
      if (f.name == name) flag = &f;
    }
    if (flag == nullptr) return fail("unknown flag --" + name);
    if (flag->takes_value && !value) {
      if (i + 1 >= argc) return fail("--" + name + " needs a value");
      value = argv[++i];
    }
    if (!flag->takes_value && value) return fail("--" + name + " takes no value");
    if (std::optional<std::string> error = flag->set(value.value_or(""))) {
      return fail("--" + name + " " + *error);
    }
  }
  return outcome;
}

std::optional<int> FlagParser::Parse(int argc, char **argv, std::vector<std::string> *rest) {
  const Outcome outcome = ParseQuietly(argc, argv, rest);
  if (outcome.help) {
    std::fputs(Help().c_str(), stdout);
    return 0;
  }
  if (outcome.version) {
    std::printf("%s\n", VersionLine().c_str());
    return 0;
  }
  if (outcome.error) return Fail(*outcome.error);
  return std::nullopt;
}

}  // namespace mgb::cli
