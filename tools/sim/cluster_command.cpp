#include "cluster_command.h"

#include <chrono>
#include <cstdio>
#include <iostream>

#include "cluster_report.h"
#include "cluster_simulator.h"
#include "json_fields.h"
#include "run_report.h"

namespace mgb::sim {
namespace {

nlohmann::json ClusterReportJson(const ClusterResult &result, const ClusterOptions &options,
                                 const std::string &label, const std::string &source) {
  nlohmann::json json = ReportJson(result.run, label, source, std::nullopt);
  json["cluster"] = {{"nodes", options.nodes},
                     {"gpus_per_node", options.node.gpus.size()},
                     {"gres_per_node", result.gres_per_node},
                     {"peak_granted", result.peak_granted},
                     {"peak_pending", result.peak_pending},
                     {"slurm_queue", "fifo-with-skip"}};
  for (size_t j = 0; j < result.job_node.size(); ++j) json["jobs"][j]["node"] = result.job_node[j];
  return json;
}

}  // namespace

absl::StatusOr<int> SimulateClusterCommand(const SimulateFlags &flags, const SimOptions &node,
                                           const Trace &trace, const std::string &description,
                                           const std::string &source) {
  ClusterOptions options;
  options.nodes = flags.nodes;
  options.node = node;
  std::printf(
      "SIMULATED cluster (no GPU used): %u node(s) x %zu GPU(s), %.1f GiB each; %zu jobs "
      "from %s; Slurm: FIFO with skip, first fit in node order; slowdown model: %s\n",
      flags.nodes, node.gpus.size(), static_cast<double>(node.gpus.front().memory_bytes) / 0x1p30,
      trace.jobs.size(), description.c_str(), node.model.source.c_str());

  std::vector<ClusterSummary> rows;
  nlohmann::json runs = nlohmann::json::array();
  for (const std::string &name : flags.cluster_policies) {
    auto policy = ParseClusterPolicy(name);
    if (!policy.ok()) {
      return absl::InvalidArgumentError("--cluster-policy: " +
                                        std::string(policy.status().message()));
    }
    options.policy = *policy;
    const auto start = std::chrono::steady_clock::now();
    auto result = SimulateCluster(trace, options);
    if (!result.ok()) return result.status();
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fflush(stdout);
    std::fprintf(stderr, "simulated %s: %zu jobs on %u nodes, %llu events in %.2f s\n",
                 name.c_str(), result->run.jobs.size(), flags.nodes,
                 static_cast<unsigned long long>(result->run.events), wall);
    std::cout << "\n[" << result->run.policy << "]\n";
    PrintRunTable(result->run, flags.label + " " + result->run.policy, std::cout);
    rows.push_back(SummariseCluster(*result, wall));
    if (!flags.out_file.empty())
      runs.push_back(ClusterReportJson(*result, options, flags.label, source));
  }
  std::cout << "\n";
  PrintClusterTable(rows, std::cout);
  if (!flags.out_file.empty()) {
    absl::Status written = WriteJsonFile(
        runs.size() == 1 ? runs.front() : nlohmann::json{{"runs", runs}}, flags.out_file);
    if (!written.ok()) return written;
    std::printf("report written to %s\n", flags.out_file.c_str());
  }
  return 0;
}

}  // namespace mgb::sim
