#include "slurm_config.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"

namespace mgb::slurm {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

uint64_t GrantableOnGpu(const NodeGpu &gpu, uint64_t context_reserve_bytes) {
  const uint64_t room =
      gpu.memory_bytes > context_reserve_bytes ? gpu.memory_bytes - context_reserve_bytes : 0;
  return room / kMiB * kMiB;
}

// A shell word that stays one word whatever it holds.
std::string Quoted(const std::string &text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string Script(const HookSettings &hooks, const std::string &purpose, const std::string &hook) {
  return absl::StrCat("#!/bin/sh\n# Slurm ", purpose, ", written by `mgb slurm-conf --hooks` ",
                      "(docs/slurm.md).\nexec ", Quoted(hooks.mgb_path), " slurm-hook ", hook,
                      " --socket ", Quoted(hooks.socket_template), " --scontrol ",
                      Quoted(hooks.scontrol_path), "\n");
}

}  // namespace

uint64_t NodeGpuMemory(const std::vector<NodeGpu> &gpus, uint64_t context_reserve_bytes) {
  uint64_t total = 0;
  for (const NodeGpu &g : gpus) total += GrantableOnGpu(g, context_reserve_bytes);
  return total;
}

std::string NodeGres(const std::vector<NodeGpu> &gpus, uint64_t context_reserve_bytes) {
  return absl::StrCat("gpumem:", NodeGpuMemory(gpus, context_reserve_bytes) / kMiB, "M");
}

std::string SlurmConfText(const std::string &node, const std::vector<NodeGpu> &gpus,
                          uint64_t context_reserve_bytes, const HookSettings *hooks) {
  std::map<std::string, int> models;
  uint64_t largest = 0;
  for (const NodeGpu &g : gpus) {
    ++models[absl::StrCat(g.name, " (", g.memory_bytes / kMiB, " MiB)")];
    largest = std::max(largest, GrantableOnGpu(g, context_reserve_bytes));
  }
  std::string inventory;
  for (const auto &[model, count] : models) {
    absl::StrAppend(&inventory, inventory.empty() ? "" : ", ", count, " x ", model);
  }
  const std::string gres = NodeGres(gpus, context_reserve_bytes);
  std::string text = absl::StrCat("# mgb slurm-conf for node ", node, ": ", inventory, "\n");
  absl::StrAppend(&text, "# --- slurm.conf, once for the cluster ---\nGresTypes=gpumem\n");
  if (hooks != nullptr) {
    for (const HookScript &script : HookScripts(*hooks)) {
      const std::string name = script.path.substr(script.path.rfind('/') + 1);
      const std::string key = name == "mgb-prolog"   ? "Prolog"
                              : name == "mgb-epilog" ? "Epilog"
                                                     : "TaskProlog";
      absl::StrAppend(&text, key, "=", script.path, "\n");
    }
    absl::StrAppend(&text, "PrologFlags=Alloc\n");
  }
  absl::StrAppend(&text, "# --- slurm.conf, this node's NodeName line gains ---\nNodeName=", node,
                  " Gres=", gres, "\n");
  absl::StrAppend(&text, "# --- gres.conf ---\nNodeName=", node,
                  " Name=gpumem Count=", gres.substr(gres.find(':') + 1), "\n");
  absl::StrAppend(
      &text,
      "# Jobs ask --gres=gpumem:SIZE (per node). One task runs on one GPU: none can hold "
      "more than ",
      largest / kMiB,
      " MiB here\n# (mgbd refuses it); a grant that fits the "
      "node but no GPU's free room now waits in mgbd's queue.\n");
  return text;
}

std::vector<HookScript> HookScripts(const HookSettings &hooks) {
  const std::string dir = hooks.directory.empty() || hooks.directory.back() != '/'
                              ? hooks.directory + "/"
                              : hooks.directory;
  return {
      {dir + "mgb-prolog",
       Script(hooks, "Prolog: tells this node's mgbd the job's GPU memory grant", "prolog")},
      {dir + "mgb-epilog",
       Script(hooks, "Epilog: the job ended; mgbd releases all it held", "epilog")},
      {dir + "mgb-task-prolog",
       Script(hooks, "TaskProlog: the job's tasks find this node's mgbd", "task-prolog")},
  };
}

std::string ExpandSocketTemplate(const std::string &socket_template, const std::string &node) {
  std::string out;
  for (size_t i = 0; i < socket_template.size(); ++i) {
    if (socket_template[i] == '%' && i + 1 < socket_template.size()) {
      if (socket_template[i + 1] == 'n') {
        out += node;
        ++i;
        continue;
      }
      if (socket_template[i + 1] == '%') {
        out += '%';
        ++i;
        continue;
      }
    }
    out += socket_template[i];
  }
  return out;
}

}  // namespace mgb::slurm
