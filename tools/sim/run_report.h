// The report of a simulated run, in `mgb batch`'s format, written by batch's own writer
// (tools/batch/report.h): a SimResult becomes a batch::BatchResult and batch prints it. The
// JSON gets a few extra top-level fields ("simulated", "policy", ...) and nothing is renamed,
// so tools read real and simulated runs alike.
#ifndef MGB_TOOLS_SIM_RUN_REPORT_H
#define MGB_TOOLS_SIM_RUN_REPORT_H

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report.h"  // tools/batch
#include "simulator.h"

namespace mgb::sim {

batch::BatchResult ToBatchResult(const SimResult &result);
batch::Summary SummaryOf(const SimResult &result);

// `single_throughput`: jobs/hour of the single-assignment run of the same trace, when run.
nlohmann::json ReportJson(const SimResult &result, const std::string &label,
                          const std::string &trace_source, std::optional<double> single_throughput);

// batch's table (every job, then the summary line); with many jobs only the summary line.
void PrintRunTable(const SimResult &result, const std::string &label, std::ostream &out,
                   size_t max_job_rows = 40);

// One row per policy run on the same trace, throughput relative to single-assignment when it
// was among them (the paper's normalisation), plus simulated SM and memory use.
void PrintPolicyTable(const std::vector<const SimResult *> &results, std::ostream &out);

}  // namespace mgb::sim

#endif  // MGB_TOOLS_SIM_RUN_REPORT_H
