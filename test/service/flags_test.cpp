// Byte sizes and the flag parser shared by mgbd and mgb.
#include <catch2/catch.hpp>

#include "mgb/core/byte_size.h"
#include "flags.h"

namespace mgb::test {

TEST_CASE("byte sizes", "[flags]") {
  using core::ParseByteSize;
  CHECK(ParseByteSize("4096") == 4096u);
  CHECK(ParseByteSize("512M") == 512ull << 20);
  CHECK(ParseByteSize("10G") == 10ull << 30);
  CHECK(ParseByteSize("100GiB") == 100ull << 30);
  CHECK(ParseByteSize("100gb") == 100ull << 30);
  CHECK(ParseByteSize("1.5T") == 3ull << 39);
  for (const char *bad : {"", "G", "10X", "1.2.3G", "-5G", "1.5", "99999999999T"}) {
    INFO(bad);
    CHECK_FALSE(ParseByteSize(bad).has_value());
  }
}

TEST_CASE("flag parser: values, '--' and errors", "[flags]") {
  std::string socket;
  uint64_t mem = 0;
  bool json = false;
  cli::FlagParser flags("mgb test", "mgb test");
  flags.String("socket", &socket, "");
  flags.Size("mem", &mem, "");
  flags.Bool("json", &json, "");
  std::vector<std::string> rest;
  const char *argv[] = {"mgb test", "--socket=/s", "--mem", "2G", "--json", "--", "prog", "--x"};
  auto code = flags.Parse(8, const_cast<char **>(argv), &rest);
  CHECK_FALSE(code.has_value());
  CHECK(socket == "/s");
  CHECK(mem == 2ull << 30);
  CHECK(json);
  CHECK(rest == std::vector<std::string>{"prog", "--x"});
  const char *unknown[] = {"mgb test", "--nope"};
  CHECK(flags.Parse(2, const_cast<char **>(unknown), &rest) == 2);
  const char *missing[] = {"mgb test", "--mem"};
  CHECK(flags.Parse(2, const_cast<char **>(missing), &rest) == 2);
  const char *bad_size[] = {"mgb test", "--mem", "lots"};
  CHECK(flags.Parse(3, const_cast<char **>(bad_size), &rest) == 2);
  const char *positional[] = {"mgb test", "stray"};
  CHECK(flags.Parse(2, const_cast<char **>(positional), nullptr) == 2);
}

}  // namespace mgb::test
