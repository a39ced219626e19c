// The trace file format (docs/simulator.md, "Trace format"): reading with errors that name the
// file and field, and writing.
#ifndef MGB_TOOLS_SIM_TRACE_JSON_H
#define MGB_TOOLS_SIM_TRACE_JSON_H

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "job_profile.h"

namespace mgb::sim {

inline constexpr int kTraceFormatVersion = 1;

// The launch shape assumed when a profile does not give one: a kernel that fills an H200
// (1,056 blocks of 256 threads = 8,448 warps = 132 SMs x 64 warps).
core::LaunchShape DefaultLaunchShape();

// Throws InputError naming `file` and the field.
Trace TraceFromJson(const nlohmann::json &json, const std::string &file);
Trace ReadTraceFile(const std::string &path);

nlohmann::json TraceToJson(const Trace &trace);
void WriteTraceFile(const Trace &trace, const std::string &path);  // throws InputError

}  // namespace mgb::sim

#endif  // MGB_TOOLS_SIM_TRACE_JSON_H
