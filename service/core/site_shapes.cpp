#include "mgb/core/site_shapes.h"

namespace mgb::core {

void SiteShapes::Learn(const std::string &site, const LaunchShape &shape, uint64_t demand) {
  if (capacity_ == 0 || site.empty()) return;
  if (auto it = sites_.find(site); it != sites_.end()) {
    if (demand <= it->second.demand) return;
    it->second.shape = shape;
    it->second.demand = demand;
    order_.splice(order_.end(), order_, it->second.age);  // learned again: youngest
    return;
  }
  if (sites_.size() >= capacity_) {
    sites_.erase(order_.front());
    order_.pop_front();
  }
  order_.push_back(site);
  sites_[site] = Learned{shape, demand, std::prev(order_.end())};
}

std::optional<LaunchShape> SiteShapes::Lookup(const std::string &site) const {
  auto it = sites_.find(site);
  if (it == sites_.end()) return std::nullopt;
  return it->second.shape;
}

}  // namespace mgb::core
