// Slurm's node choice for a job asking a count GRES (--gres=gpumem:BYTES, gpu:1 or shard:1), as
// select/cons_tres does with equal node weights: the first node, in node order, whose free count
// (its total minus the grants of the jobs running there) covers the request.
#ifndef MGB_TOOLS_SIM_SLURM_SELECT_H
#define MGB_TOOLS_SIM_SLURM_SELECT_H

#include <cstdint>
#include <optional>
#include <vector>

namespace mgb::sim {

class GresPool {
 public:
  GresPool(size_t nodes, uint64_t per_node)
      : per_node_(per_node), granted_(nodes, 0), peak_(nodes, 0) {}

  std::optional<size_t> FirstFit(uint64_t request) const;
  // The largest free count of any node: a request above it fits nowhere now.
  uint64_t MostFree() const;
  // Both assume what FirstFit / a matching Grant guarantee (no overdraw, no double release).
  void Grant(size_t node, uint64_t count);
  void Release(size_t node, uint64_t count);

  uint64_t per_node() const { return per_node_; }
  // Per node, the most it ever had granted at once (never above per_node()).
  const std::vector<uint64_t> &peak_granted() const { return peak_; }

 private:
  uint64_t per_node_;
  std::vector<uint64_t> granted_;
  std::vector<uint64_t> peak_;
};

}  // namespace mgb::sim

#endif  // MGB_TOOLS_SIM_SLURM_SELECT_H
