// --gpus FILE parsing (nlohmann json), with errors naming the file and field.
#include "mgb/core/gpu_config.h"

#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace mgb::core {
namespace {

using nlohmann::json;

// Reads an optional (or required) positive integer field no larger than max_value.
absl::Status ReadCount(const json &gpu, const std::string &where, const char *field, bool required,
                       uint64_t max_value, uint64_t &out) {
  auto it = gpu.find(field);
  if (it == gpu.end()) {
    if (required) return absl::InvalidArgumentError(absl::StrCat(where, ".", field, " is missing"));
    return absl::OkStatus();
  }
  if (!it->is_number_integer() || it->get<int64_t>() <= 0 || it->get<uint64_t>() > max_value) {
    return absl::InvalidArgumentError(absl::StrCat(where, ".", field, " must be an integer in 1..",
                                                   max_value, ", got ", it->dump()));
  }
  out = it->get<uint64_t>();
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<GpuSpec>> ParseGpuConfig(const std::string &json_text,
                                                    const std::string &source_name) {
  json doc = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return absl::InvalidArgumentError(absl::StrCat(source_name, ": not valid JSON"));
  }
  if (!doc.is_object() || !doc.contains("gpus") || !doc["gpus"].is_array()) {
    return absl::InvalidArgumentError(absl::StrCat(source_name, ": \"gpus\" must be an array"));
  }
  if (doc["gpus"].empty()) {
    return absl::InvalidArgumentError(absl::StrCat(source_name, ": \"gpus\" is empty"));
  }
  const uint64_t u32 = std::numeric_limits<uint32_t>::max();
  std::vector<GpuSpec> gpus;
  for (size_t i = 0; i < doc["gpus"].size(); ++i) {
    const json &g = doc["gpus"][i];
    const std::string where = absl::StrCat(source_name, ": gpus[", i, "]");
    if (!g.is_object()) return absl::InvalidArgumentError(where + " must be an object");
    GpuSpec spec;
    auto name = g.find("name");
    if (name == g.end() || !name->is_string() || name->get<std::string>().empty()) {
      return absl::InvalidArgumentError(where + ".name must be a non-empty string");
    }
    spec.name = name->get<std::string>();
    // Optional: how CUDA finds this GPU (libmgb asks cudaDeviceGetByPCIBusId); without it the
    // GPU's place in the list is its CUDA number.
    if (auto bus = g.find("pci_bus_id"); bus != g.end()) {
      if (!bus->is_string() || bus->get<std::string>().empty()) {
        return absl::InvalidArgumentError(where + ".pci_bus_id must be a non-empty string");
      }
      spec.pci_bus_id = bus->get<std::string>();
    }
    uint64_t sms = 0, blocks = spec.sm.max_blocks, warps = spec.sm.max_warps,
             regs = spec.sm.registers, shared = spec.sm.shared_bytes;
    for (absl::Status st : {ReadCount(g, where, "memory_bytes", true,
                                      std::numeric_limits<int64_t>::max(), spec.memory_bytes),
                            ReadCount(g, where, "sms", true, 65535, sms),
                            ReadCount(g, where, "max_blocks_per_sm", false, 65535, blocks),
                            ReadCount(g, where, "max_warps_per_sm", false, 65535, warps),
                            ReadCount(g, where, "registers_per_sm", false, u32, regs),
                            ReadCount(g, where, "shared_bytes_per_sm", false, u32, shared)}) {
      if (!st.ok()) return st;
    }
    spec.sms = static_cast<uint32_t>(sms);
    spec.sm = {static_cast<uint32_t>(blocks), static_cast<uint32_t>(warps),
               static_cast<uint32_t>(regs), static_cast<uint32_t>(shared)};
    gpus.push_back(std::move(spec));
  }
  return gpus;
}

absl::StatusOr<std::vector<GpuSpec>> LoadGpuConfig(const std::string &path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open the GPU config file"));
  std::stringstream text;
  text << in.rdbuf();
  return ParseGpuConfig(text.str(), path);
}

}  // namespace mgb::core
