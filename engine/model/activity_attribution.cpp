// ActivityAttribution (see activity_attribution.h).
#include "engine/model/activity_attribution.h"

#include <algorithm>

#include "kernels/common/error.h"

namespace llmbench {

void ActivityAttribution::add_slot(int slot, int parent, bool range) {
  LLMBENCH_CHECK(slot == int(parent_.size()), "slots are added in order");
  LLMBENCH_CHECK(parent < slot, "a slot's parent is opened before it");
  parent_.push_back(parent);
  range_.push_back(range);
}

void ActivityAttribution::add_correlation(std::uint32_t correlation_id,
                                          std::uint64_t external_id) {
  // An API call inside nested scopes is reported once per pushed kind, not per nesting level:
  // CUPTI gives the innermost id, which is the op that issued the call.
  external_of_[correlation_id] = external_id;
}

void ActivityAttribution::add_activity(const DeviceActivity& a) { activities_.push_back(a); }

void ActivityAttribution::add_graph_launch(int launch_slot, int first,
                                           std::shared_ptr<const GraphOps> ops) {
  LLMBENCH_CHECK(ops != nullptr && first > launch_slot, "a graph's ops follow its launching slot");
  const bool added = launches_.emplace(launch_slot, GraphLaunch{first, std::move(ops)}).second;
  LLMBENCH_CHECK(added, "one graph launch per slot");
}

void ActivityAttribution::add_node_clone(std::uint64_t original, std::uint64_t clone) {
  original_[clone] = original;
}

int ActivityAttribution::graph_slot(int slot, const DeviceActivity& a) const {
  if (a.graph_node == 0) return slot;
  const auto launch = launches_.find(slot);
  if (launch == launches_.end()) return slot;  // a graph this timer did not see launched
  const auto& nodes = launch->second.ops->op_of_node;
  auto it = nodes.find(a.graph_node);
  if (it == nodes.end()) {
    const auto orig = original_.find(a.graph_node);
    if (orig != original_.end()) it = nodes.find(orig->second);
  }
  if (it == nodes.end()) return -1;
  return it->second < 0 ? slot : launch->second.first + it->second;
}

std::vector<SlotDeviceTime> ActivityAttribution::resolve() {
  std::vector<SlotDeviceTime> out(parent_.size());
  for (std::size_t s = 0; s < out.size(); ++s) out[s].spans = range_[s];
  unattributed_ = 0;
  unmatched_graph_nodes_ = 0;
  slot_of_.assign(activities_.size(), -1);
  for (std::size_t i = 0; i < activities_.size(); ++i) {
    const DeviceActivity& a = activities_[i];
    const auto it = external_of_.find(a.correlation_id);
    if (it == external_of_.end() || it->second < base_ || it->second - base_ >= out.size()) {
      ++unattributed_;
      continue;
    }
    const int slot = graph_slot(int(it->second - base_), a);
    if (slot < 0 || std::size_t(slot) >= out.size()) {
      ++unmatched_graph_nodes_;
      continue;
    }
    slot_of_[i] = slot;
    SlotDeviceTime& t = out[std::size_t(slot)];
    ++t.activities;
    t.busy_ns += std::max<std::int64_t>(0, a.end_ns - a.start_ns);
    t.first_ns = t.first_ns < 0 ? a.start_ns : std::min(t.first_ns, a.start_ns);
    t.last_ns = std::max(t.last_ns, a.end_ns);
  }
  // Children have higher numbers than their parents: one pass from the end carries every
  // slot's span up to its parent after all of its own descendants were merged into it.
  for (std::size_t s = out.size(); s-- > 0;) {
    const int p = parent_[s];
    if (p < 0) continue;
    SlotDeviceTime& up = out[std::size_t(p)];
    up.spans = true;
    if (out[s].first_ns < 0) continue;
    up.first_ns = up.first_ns < 0 ? out[s].first_ns : std::min(up.first_ns, out[s].first_ns);
    up.last_ns = std::max(up.last_ns, out[s].last_ns);
  }
  return out;
}

std::vector<DeviceWorkRecord> ActivityAttribution::device_work(std::int64_t offset_ns) const {
  std::vector<DeviceWorkRecord> out;
  out.reserve(activities_.size());
  for (std::size_t i = 0; i < activities_.size() && i < slot_of_.size(); ++i) {
    if (slot_of_[i] < 0) continue;
    const DeviceActivity& a = activities_[i];
    DeviceWorkRecord r;
    r.op = slot_of_[i];
    r.name = a.name;
    r.kind = a.kind;
    r.device = a.device;
    r.stream = a.stream;
    r.correlation_id = a.correlation_id;
    r.start_ns = a.start_ns + offset_ns;
    r.dur_ns = std::max<std::int64_t>(0, a.end_ns - a.start_ns);
    r.bytes = a.bytes;
    out.push_back(r);
  }
  std::sort(out.begin(), out.end(), [](const DeviceWorkRecord& x, const DeviceWorkRecord& y) {
    if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
    if (x.op != y.op) return x.op < y.op;
    return x.correlation_id < y.correlation_id;
  });
  return out;
}

int KernelNames::intern(const char* name) {
  std::string key = name != nullptr ? name : "(unnamed)";
  const auto it = index_.find(key);
  if (it != index_.end()) return it->second;
  const int id = int(names_.size());
  names_.push_back(key);
  index_.emplace(std::move(key), id);
  return id;
}

const char* memcpy_name(int copy_kind) {
  switch (copy_kind) {
    case 1: return "Memcpy HtoD";
    case 2: return "Memcpy DtoH";
    case 8: return "Memcpy DtoD";
    case 9: return "Memcpy HtoH";
    case 10: return "Memcpy PtoP";
  }
  return "Memcpy";
}

bool ActivityAttribution::interval(const SlotDeviceTime& t, std::int64_t& start_ns,
                                   std::int64_t& dur_ns) {
  if (t.first_ns < 0) return false;
  start_ns = t.first_ns;
  dur_ns = t.spans ? t.last_ns - t.first_ns : t.busy_ns;
  return true;
}

}  // namespace llmbench
