#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "batch_command.h"
#include "temp_dir.h"

namespace {
int Run(std::vector<std::string> args) {
  args.insert(args.begin(), "batch");
  std::vector<char *> argv;
  for (std::string &a : args) argv.push_back(a.data());
  return RunBatchCommand(static_cast<int>(argv.size()), argv.data());
}
}  // namespace

TEST_CASE("mgb batch runs a job list end to end and writes its JSON", "[batch][command]") {
  TempDir dir;
  std::string jobs = dir.Write("jobs.json", R"({"jobs": [
      {"name": "one", "argv": ["/bin/sh", "-c", "echo 'MGB_RESULT PASS'"], "memory_bytes": 1024},
      {"name": "two", "argv": ["/bin/sh", "-c", "exit 0"]}]})");
  std::string out = dir.Path("out.json");
  // --flag=value as well as --flag value (was "unknown argument '--workers=2'").
  CHECK(Run({"--jobs=" + jobs, "--out", out, "--workers=2", "--label", "test", "--no-nvml"}) == 0);
  auto doc = nlohmann::json::parse(TempDir::Read(out));
  CHECK(doc["summary"]["succeeded"] == 2);
  CHECK(doc["label"] == "test");
  CHECK(doc["jobs"][0]["result"] == "PASS");
  CHECK(doc["jobs"][0]["memory_bytes"] == 1024);
  CHECK(doc["gpu_note"] == "sampling off (--no-nvml)");
  CHECK(doc["host_gate"]["reserve_bytes"].get<uint64_t>() >= (uint64_t{1} << 30));  // on by default
  CHECK(doc["jobs"][1]["host_peak_bytes"].get<uint64_t>() > 0);
  CHECK_THAT(TempDir::Read(dir.Path("out.json.logs/one.out")), Catch::Contains("MGB_RESULT PASS"));
}

TEST_CASE("mgb batch exits 1 when a job crashes", "[batch][command]") {
  TempDir dir;
  std::string jobs =
      dir.Write("jobs.json", R"({"jobs": [{"name": "bad", "argv": ["/bin/sh", "-c", "exit 4"]}]})");
  CHECK(Run({"--jobs", jobs, "--out", dir.Path("out.json"), "--no-nvml"}) == 1);
}

TEST_CASE("mgb batch rejects bad usage and bad input with status 2", "[batch][command]") {
  TempDir dir;
  std::string bad = dir.Write("bad.json", R"({"jobs": [{"name": "x"}]})");
  CHECK(Run({"--jobs", bad, "--out", dir.Path("o.json")}) == 2);
  CHECK(Run({"--jobs", dir.Path("none.json"), "--out", dir.Path("o.json")}) == 2);
  CHECK(Run({"--out", dir.Path("o.json")}) == 2);
  CHECK(Run({"--jobs", bad}) == 2);
  CHECK(Run({"--frobnicate"}) == 2);
  CHECK(Run({"--jobs", bad, "--out", dir.Path("o.json"), "--workers", "0"}) == 2);
  CHECK(Run({"--generate", "--out", dir.Path("m.json"), "--ratio", "3-1"}) == 2);
  CHECK(Run({"--jobs", bad, "--out", dir.Path("o.json"), "--host-reserve", "lots"}) == 2);
  CHECK(Run({"--help"}) == 0);
}

TEST_CASE("mgb batch --host-reserve takes a size or off, and --history feeds FIFO runs too",
          "[batch][command][host]") {
  TempDir dir;
  std::string jobs =
      dir.Write("jobs.json", R"({"jobs": [{"name": "one", "argv": ["/bin/sh", "-c", "exit 0"],
                                 "host_memory_bytes": 2048}]})");
  std::string out = dir.Path("out.json");
  CHECK(Run({"--jobs", jobs, "--out", out, "--host-reserve", "2G", "--no-nvml"}) == 0);
  auto doc = nlohmann::json::parse(TempDir::Read(out));
  CHECK(doc["host_gate"]["reserve_bytes"] == (uint64_t{2} << 30));
  CHECK(doc["jobs"][0]["host_memory_bytes"] == 2048);
  // The first run's JSON is a history: a FIFO run reads its host peaks (was refused before).
  CHECK(Run({"--jobs", jobs, "--out", dir.Path("again.json"), "--history", out, "--host-reserve",
             "off", "--no-nvml"}) == 0);
  CHECK(nlohmann::json::parse(TempDir::Read(dir.Path("again.json")))["host_gate"] == "off");
  CHECK(Run({"--jobs", jobs, "--out", out, "--history", dir.Path("none.json"), "--no-nvml"}) == 2);
}

TEST_CASE("mgb batch --generate writes a job list the runner accepts", "[batch][command]") {
  TempDir dir;
  std::string out = dir.Path("mix.json");
  REQUIRE(Run({"--generate", "--out", out, "--count", "32", "--ratio", "5:1", "--seed", "3",
               "--bin-dir", "/opt/wl"}) == 0);
  auto doc = nlohmann::json::parse(TempDir::Read(out));
  REQUIRE(doc["jobs"].size() == 32);
  int large = 0;
  for (const auto &job : doc["jobs"]) large += job["name"].get<std::string>()[0] == 'L';
  CHECK(large == 27);  // round(32 * 5 / 6)
  CHECK(doc["jobs"][0]["argv"][0].get<std::string>().rfind("/opt/wl/", 0) == 0);
}
