// The flags of `mgb simulate`, parsed into a plain struct (the library never reads globals).
#ifndef MGB_TOOLS_SIM_SIMULATE_FLAGS_H
#define MGB_TOOLS_SIM_SIMULATE_FLAGS_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "trace_generator.h"

namespace mgb::sim {

struct SimulateFlags {
  bool help = false;
  std::string version_line;  // --version: what to print (nothing else is parsed)
  // Input.
  std::string trace_file;
  bool generate = false;
  GeneratorOptions generator;  // its seed and arrival gap also serve --draw
  size_t draw_jobs = 0;        // --draw N: jobs drawn from the profiles of --from
  std::vector<std::string> draw_from;
  // Node.
  uint32_t gpu_count = 2;
  uint64_t gpu_memory_bytes = 0;  // 0: the H200 default
  uint32_t sms = 132;
  uint32_t max_slowdown_percent = 0;  // mgbd --max-slowdown for the mgb runs
  std::string gpu_config_file;
  std::optional<uint64_t> context_bytes;  // none: the core's default (measured on H200)
  // Cluster (0 nodes: one node, the policies of --policy).
  uint32_t nodes = 0;
  std::vector<std::string> cluster_policies = {"mgb", "whole-gpu", "shard:4"};
  // Scheduling.
  std::vector<std::string> policies = {"mgb", "single"};
  uint32_t workers = 0;
  std::string model_file;
  // Output.
  std::string out_file;
  std::string label = "simulated";
  std::string write_trace_file;
  size_t utilisation_buckets = 60;
  // Other modes.
  std::vector<std::string> calibrate_files;
  std::string write_model_file;
  std::string from_batch_file;
  std::string check_recorded_file;
  std::vector<std::string> fit_recorded_files;
  std::string profiles_file;  // --fit-recorded: comma-separated
  double tolerance = 0.10;
};

// H200 as measured on the GPU machine: nvidia-smi's 143,771 MiB, 132 SMs.
inline constexpr uint64_t kH200MemoryBytes = uint64_t{143771} << 20;

// Errors name the flag; argv[0] is skipped.
absl::StatusOr<SimulateFlags> ParseSimulateFlags(int argc, char **argv);

// core::ParseByteSize with an error that shows what a size looks like.
absl::StatusOr<uint64_t> ParseBytes(const std::string &text);

extern const char kSimulateUsage[];

}  // namespace mgb::sim

#endif  // MGB_TOOLS_SIM_SIMULATE_FLAGS_H
