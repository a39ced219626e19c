// --gpus FILE parsing: values, defaults, and errors naming the file and field.
#include <catch2/catch.hpp>

#include "mgb/core/gpu_config.h"

namespace mgb::test {

TEST_CASE("GPU config: required fields, optional per-SM limits", "[config]") {
  auto gpus = core::ParseGpuConfig(
      R"({"gpus": [{"name": "g0", "memory_bytes": 17179869184, "sms": 132},
                   {"name": "g1", "memory_bytes": 1024, "sms": 2, "max_blocks_per_sm": 16,
                    "pci_bus_id": "00000000:19:00.0",
                    "max_warps_per_sm": 48, "registers_per_sm": 32768, "shared_bytes_per_sm": 1000}]})",
      "f.json");
  REQUIRE(gpus.ok());
  REQUIRE(gpus->size() == 2);
  CHECK((*gpus)[0].memory_bytes == 17179869184ull);
  CHECK((*gpus)[0].sm.max_warps == 64);  // Hopper default
  CHECK_FALSE((*gpus)[0].has_nvml);
  CHECK((*gpus)[0].pci_bus_id.empty());  // CUDA's device 0
  CHECK((*gpus)[1].pci_bus_id == "00000000:19:00.0");
  CHECK((*gpus)[1].sm.max_blocks == 16);
  CHECK((*gpus)[1].sm.max_warps == 48);
  CHECK((*gpus)[1].sm.registers == 32768);
  CHECK((*gpus)[1].sm.shared_bytes == 1000);
}

TEST_CASE("GPU config: errors name the file and the field", "[config]") {
  const std::pair<const char *, const char *> cases[] = {
      {"not json", "f.json: not valid JSON"},
      {R"({"gpu": []})", "\"gpus\" must be an array"},
      {R"({"gpus": []})", "\"gpus\" is empty"},
      {R"({"gpus": [{"memory_bytes": 1, "sms": 1}]})", "gpus[0].name"},
      {R"({"gpus": [{"name": "a", "sms": 1}]})", "gpus[0].memory_bytes is missing"},
      {R"({"gpus": [{"name": "a", "memory_bytes": -5, "sms": 1}]})",
       "gpus[0].memory_bytes must be"},
      {R"({"gpus": [{"name": "a", "memory_bytes": 5, "sms": "many"}]})", "gpus[0].sms must be"},
      {R"({"gpus": [{"name": "a", "memory_bytes": 5, "sms": 1, "max_warps_per_sm": 0}]})",
       "gpus[0].max_warps_per_sm"},
      {R"({"gpus": [{"name": "a", "memory_bytes": 5, "sms": 1, "pci_bus_id": 3}]})",
       "gpus[0].pci_bus_id must be"},
  };
  for (const auto &[text, expected] : cases) {
    auto gpus = core::ParseGpuConfig(text, "f.json");
    INFO(text);
    REQUIRE_FALSE(gpus.ok());
    CHECK_THAT(std::string(gpus.status().message()), Catch::Contains(expected));
    CHECK_THAT(std::string(gpus.status().message()), Catch::StartsWith("f.json"));
  }
  auto missing = core::LoadGpuConfig("/nonexistent/gpus.json");
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(std::string(missing.status().message()), Catch::Contains("/nonexistent/gpus.json"));
}

}  // namespace mgb::test
