#include "run_tasks.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "mgb.pb.h"

namespace mgb::cli {

absl::StatusOr<std::vector<Placement>> BeginRunTasks(Client &client,
                                                     const ProgramIdentity &identity,
                                                     uint64_t memory, int gpus,
                                                     const LaunchShape &shape,
                                                     const std::string &label) {
  if (gpus == 1) {
    absl::StatusOr<Placement> placed = client.TaskBeginProfiled(
        identity.program, memory, shape, label, std::nullopt, identity.arguments);
    if (!placed.ok()) return placed.status();
    return std::vector<Placement>{*placed};
  }
  absl::StatusOr<v1::StatusReply> status = client.Status();
  if (!status.ok()) return status.status();
  if (status->gpus_size() < gpus) {
    return absl::InvalidArgumentError(
        absl::StrCat("--gpus ", gpus, ": mgbd has ", status->gpus_size(), " GPU(s)"));
  }
  std::vector<const v1::GpuStatus *> chosen;
  for (const v1::GpuStatus &g : status->gpus()) {
    if (g.pci_bus_id().empty()) {
      return absl::FailedPreconditionError(
          "--gpus: mgbd's GPUs come from a --gpus file, without PCI bus ids to place a task on "
          "one of them");
    }
    chosen.push_back(&g);
  }
  std::stable_sort(chosen.begin(), chosen.end(), [](const auto *a, const auto *b) {
    return a->memory_available_bytes() > b->memory_available_bytes();
  });
  chosen.resize(static_cast<size_t>(gpus));
  // In index order: runs of several GPUs take their GPUs as locks in one order, never in a cycle.
  std::sort(chosen.begin(), chosen.end(),
            [](const auto *a, const auto *b) { return a->index() < b->index(); });
  std::vector<Placement> placed;
  for (size_t k = 0; k < chosen.size(); ++k) {
    client.SetVisibleGpus({chosen[k]->pci_bus_id()});
    absl::StatusOr<Placement> one =
        client.TaskBeginProfiled(absl::StrCat(identity.program, " [GPU ", k + 1, " of ", gpus, "]"),
                                 memory, shape, label, std::nullopt, identity.arguments);
    if (!one.ok()) {
      client.SetVisibleGpus({});
      for (const Placement &p : placed) (void)client.TaskEnd(p.task_id);
      return one.status();
    }
    placed.push_back(*one);
  }
  client.SetVisibleGpus({});
  return placed;
}

}  // namespace mgb::cli
