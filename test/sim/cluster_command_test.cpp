// `mgb simulate --nodes N` as a user runs it: bad cluster flags exit 2 and name the flag; a small
// cluster run from drawn profiles writes one report per cluster policy.
#include <catch2/catch.hpp>

#include <vector>

#include "json_fields.h"
#include "simulate_command.h"
#include "simulate_flags.h"
#include "temp_file.h"

using mgb::sim::test::TempFile;

namespace {

const char kProfiles[] = "examples/traces/w1-h200-solo-profiles.json";

int Run(std::vector<std::string> args) {
  args.insert(args.begin(), "simulate");
  std::vector<char *> argv;
  for (std::string &a : args) argv.push_back(a.data());
  return RunSimulateCommand(static_cast<int>(argv.size()), argv.data());
}

std::string ParseError(std::vector<std::string> args) {
  args.insert(args.begin(), "simulate");
  std::vector<char *> argv;
  for (std::string &a : args) argv.push_back(a.data());
  auto flags = mgb::sim::ParseSimulateFlags(static_cast<int>(argv.size()), argv.data());
  return flags.ok() ? "(parsed)" : std::string(flags.status().message());
}

// The profiles from the source tree, wherever the test runs.
std::string Profiles() { return std::string(MGB_SOURCE_DIR) + "/" + kProfiles; }

}  // namespace

TEST_CASE("cluster flags: bad input names the flag and exits 2", "[sim][cluster][cli]") {
  const std::string from = Profiles();
  struct Case {
    std::vector<std::string> args;
    const char *flag;
  };
  const std::vector<Case> cases = {
      {{"--draw", "10", "--from", from, "--nodes", "0"}, "--nodes"},
      {{"--draw", "10", "--from", from, "--nodes", "many"}, "--nodes"},
      {{"--draw", "10", "--from", from, "--nodes", "2", "--cluster-policy", "slurm"},
       "--cluster-policy"},
      {{"--draw", "10", "--from", from, "--nodes", "2", "--cluster-policy", "shard:0"},
       "--cluster-policy"},
      {{"--draw", "10", "--from", from, "--nodes", "2", "--cluster-policy", ","},
       "--cluster-policy"},
      {{"--draw", "10", "--from", from, "--cluster-policy", "mgb"}, "--cluster-policy"},
      {{"--draw", "10", "--from", from, "--nodes", "2", "--policy", "mgb"}, "--policy"},
      {{"--draw", "10", "--from", from, "--nodes", "2", "--workers", "4"}, "--workers"},
      {{"--draw", "0", "--from", from}, "--draw"},
      {{"--draw", "10"}, "--draw"},
      {{"--draw", "10", "--from", from, "--generate"}, "--draw"},
      {{"--generate", "--from", from}, "--from"},
      {{"--nodes", "2", "--calibrate", "x.json"}, "--nodes"},
  };
  for (const Case &c : cases) {
    INFO(c.flag);
    CHECK_THAT(ParseError(c.args), Catch::Contains(c.flag));
    CHECK(Run(c.args) == 2);
  }
  CHECK(Run({"--draw", "10", "--from", "/nonexistent.json", "--nodes", "2"}) == 2);
  CHECK(ParseError({"--draw", "10", "--from", from, "--nodes", "2", "--gpus", "8"}) == "(parsed)");
}

TEST_CASE("a small cluster run writes one report per cluster policy", "[sim][cluster][cli]") {
  TempFile out("cluster.json");
  REQUIRE(Run({"--draw", "200", "--from", Profiles(), "--arrival-gap", "2", "--nodes", "2",
               "--gpus", "2", "--cluster-policy", "mgb,whole-gpu,shard:4", "--out", out.path()}) ==
          0);
  const absl::StatusOr<nlohmann::json> report = mgb::sim::ParseJsonFile(out.path());
  REQUIRE(report.ok());
  const nlohmann::json &json = *report;
  REQUIRE(json["runs"].size() == 3);
  CHECK(json["runs"][0]["policy"] == "mgb");
  CHECK(json["runs"][1]["policy"] == "whole-gpu");
  CHECK(json["runs"][2]["policy"] == "shard:4");
  for (const auto &run : json["runs"]) {
    CHECK(run["jobs"].size() == 200);
    CHECK(run["gpus"].size() == 4);
    CHECK(run["cluster"]["nodes"] == 2);
    CHECK(run["gpus"][3] == "n1.g1");
  }
  CHECK(json["runs"][0]["summary"]["crashed"] == 0);  // mgb
  CHECK(json["runs"][1]["summary"]["crashed"] == 0);  // whole GPUs
  CHECK(json["runs"][2]["summary"]["crashed"] > 0);   // four W1 jobs a GPU overflow it
}
