// The generated API library links and its messages survive a wire round trip: the first thing
// every component builds on.
#include <catch2/catch.hpp>

#include "mgb.pb.h"

TEST_CASE("TaskBeginRequest survives serialisation", "[proto]") {
  mgb::v1::TaskBeginRequest in;
  in.set_session_id("s-1");
  in.set_memory_bytes(100ull << 30);
  in.mutable_shape()->mutable_grid()->set_x(4096);
  in.mutable_shape()->mutable_block()->set_x(256);
  std::string wire;
  REQUIRE(in.SerializeToString(&wire));

  mgb::v1::TaskBeginRequest out;
  REQUIRE(out.ParseFromString(wire));
  CHECK(out.session_id() == "s-1");
  CHECK(out.memory_bytes() == (100ull << 30));
  CHECK(out.shape().grid().x() == 4096);
  CHECK(out.shape().block().x() == 256);
  CHECK(out.deadline_unix_ms() == 0);
}
