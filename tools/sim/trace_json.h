// The trace file format (docs/simulator.md, "Trace format"): reading with errors that name the
// file and field, and writing.
#ifndef MGB_TOOLS_SIM_TRACE_JSON_H
#define MGB_TOOLS_SIM_TRACE_JSON_H

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "job_profile.h"

namespace mgb::sim {

inline constexpr int kTraceFormatVersion = 1;

// The launch shape assumed when a profile does not give one: a kernel that fills an H200
// (1,056 blocks of 256 threads = 8,448 warps = 132 SMs x 64 warps).
core::LaunchShape DefaultLaunchShape();

// InvalidArgument naming `file` and the field; NotFound when the file cannot be opened.
absl::StatusOr<Trace> TraceFromJson(const nlohmann::json &json, const std::string &file);
absl::StatusOr<Trace> ReadTraceFile(const std::string &path);

nlohmann::json TraceToJson(const Trace &trace);
// Unavailable naming the file when it cannot be written.
absl::Status WriteTraceFile(const Trace &trace, const std::string &path);

}  // namespace mgb::sim

#endif  // MGB_TOOLS_SIM_TRACE_JSON_H
