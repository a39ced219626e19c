// Launch shapes learned per task site (issue 35). A task placed before its first launch (a lazy
// task bound early, a task whose probe cannot spell its shape) has no shape at placement, so the
// policy cannot weigh its demand: on 2 x H100, 13 of W1's 16 tasks were placed so and counted 2
// warps each. The most demanding launch an earlier task of the same site made (same owner,
// program and label) stands in for it until its own launches say more. Bounded: past `capacity`
// sites, the one learned longest ago is forgotten.
#ifndef MGB_SERVICE_CORE_SITE_SHAPES_H
#define MGB_SERVICE_CORE_SITE_SHAPES_H

#include <cstddef>
#include <cstdint>
#include <list>
#include <optional>
#include <string>
#include <unordered_map>

#include "mgb/core/gpu.h"

namespace mgb::core {

class SiteShapes {
 public:
  explicit SiteShapes(size_t capacity = 4096) : capacity_(capacity) {}

  // The site's shape becomes `shape` when its demand is above the one kept (or none is).
  void Learn(const std::string &site, const LaunchShape &shape, uint64_t demand);
  std::optional<LaunchShape> Lookup(const std::string &site) const;
  size_t size() const { return sites_.size(); }

  // A request's shape that says nothing: the default one thread in one block.
  static bool Unknown(const LaunchShape &shape) {
    return shape.blocks() == 1 && shape.threads_per_block() == 1 &&
           shape.registers_per_thread == 0 && shape.shared_bytes_per_block == 0;
  }

 private:
  struct Learned {
    LaunchShape shape;
    uint64_t demand = 0;
    std::list<std::string>::iterator age;
  };
  size_t capacity_;
  std::unordered_map<std::string, Learned> sites_;
  std::list<std::string> order_;  // oldest first
};

}  // namespace mgb::core

#endif  // MGB_SERVICE_CORE_SITE_SHAPES_H
