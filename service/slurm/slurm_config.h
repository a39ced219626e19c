// What a node's Slurm configuration needs for mgb (`mgb slurm-conf`, docs/slurm.md): GPU memory
// as a count GRES named gpumem on the node, and the three hook scripts that tell the node's mgbd
// of each job's grant and end.
#ifndef MGB_SERVICE_SLURM_SLURM_CONFIG_H
#define MGB_SERVICE_SLURM_SLURM_CONFIG_H

#include <cstdint>
#include <string>
#include <vector>

namespace mgb::slurm {

struct NodeGpu {
  std::string name;
  uint64_t memory_bytes = 0;
};

// Where the hooks are written and what they run.
struct HookSettings {
  std::string directory;        // absolute; the scripts are DIR/mgb-prolog, -epilog, -task-prolog
  std::string mgb_path;         // absolute path of the mgb command
  std::string socket_template;  // mgbd's socket; %n is the node's name (several slurmd per host)
  std::string scontrol_path;    // absolute path of scontrol
};

struct HookScript {
  std::string path;
  std::string text;
};

// The gpumem a node offers Slurm: per GPU its memory less one CUDA context reserve (what one
// process's tasks can hold there), in whole MiB, summed.
uint64_t NodeGpuMemory(const std::vector<NodeGpu> &gpus, uint64_t context_reserve_bytes);
// The node's GRES as slurm.conf writes it, e.g. "gpumem:286464M".
std::string NodeGres(const std::vector<NodeGpu> &gpus, uint64_t context_reserve_bytes);
// The configuration lines, commented by section (cluster-wide slurm.conf, the node's NodeName
// addition, gres.conf); the hook lines only when `hooks` is given.
std::string SlurmConfText(const std::string &node, const std::vector<NodeGpu> &gpus,
                          uint64_t context_reserve_bytes, const HookSettings *hooks);
std::vector<HookScript> HookScripts(const HookSettings &hooks);

// "%n" -> node, "%%" -> "%"; anything else is kept.
std::string ExpandSocketTemplate(const std::string &socket_template, const std::string &node);

}  // namespace mgb::slurm

#endif  // MGB_SERVICE_SLURM_SLURM_CONFIG_H
