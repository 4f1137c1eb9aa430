// Device activity attributed to traced ops: the bookkeeping of the CUPTI op timer
// (cupti_timer.h) without CUPTI, so it is tested on machines with no GPU. Each traced op
// (a timer slot) pushes an external correlation id while it issues work; CUPTI reports every
// kernel, memcpy and memset with the correlation id of the API call that launched it, and
// external-correlation records that map those API calls to the pushed id. Here: the maps from
// activity to slot, and each slot's device interval (its own activities, and its descendants'
// for slots that have children), and each activity as a record of its slot (DeviceWorkRecord),
// its name stored once (KernelNames). A replayed CUDA graph's kernels all carry the correlation
// id of its one launch; each is given to the op its graph node was recorded for at capture
// (graph_ops.h, add_graph_launch). Not here: reading CUPTI's buffers (cupti_timer.cpp).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/model/graph_ops.h"
#include "engine/model/trace.h"

namespace llmbench {

// One kernel, memcpy or memset as CUPTI reports it (device clock, ns).
struct DeviceActivity {
  std::uint32_t correlation_id = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  DeviceWorkKind kind = DeviceWorkKind::kKernel;
  int name = 0;                 // KernelNames index
  std::uint32_t device = 0, stream = 0;
  std::int64_t bytes = 0;       // copied or set; 0 for kernels
  std::uint64_t graph_node = 0;  // CUPTI's id of the graph node that ran it; 0: not in a graph
};

// Names of device work, each stored once and numbered in the order first seen. CUPTI's kernel
// name is a pointer into CUPTI's memory; what a trace keeps is a copy of it.
class KernelNames {
 public:
  int intern(const char* name);  // nullptr: "(unnamed)"
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::unordered_map<std::string, int> index_;
  std::vector<std::string> names_;
};

// The name of a memcpy of CUPTI's copy kind (CUpti_ActivityMemcpyKind: 1 HtoD, 2 DtoH, 8 DtoD,
// 9 HtoH, 10 PtoP; the array kinds and unknown ones are "Memcpy"), as Kineto names copies.
const char* memcpy_name(int copy_kind);

// The device time of one slot.
struct SlotDeviceTime {
  int activities = 0;           // its own kernels, copies and sets
  std::int64_t busy_ns = 0;     // the sum of their durations
  std::int64_t first_ns = -1;   // the earliest start among them and its descendants' (-1: none)
  std::int64_t last_ns = -1;    // the latest end, likewise
  bool spans = false;           // a range, or a slot with children: reports its span
};

class ActivityAttribution {
 public:
  // Slots are numbered 0.. in the order they were opened; a child's number is above its
  // parent's (-1: a root). A range (a step or a layer) reports its span even when nothing
  // else was traced inside it (--trace steps).
  void add_slot(int slot, int parent, bool range = false);
  // An API call made while `external_id` was the innermost pushed id.
  void add_correlation(std::uint32_t correlation_id, std::uint64_t external_id);
  void add_activity(const DeviceActivity& a);
  // A captured graph launched while `launch_slot` was the innermost op (its external id pushed),
  // its ops recorded as slots [first, first + ops->ops.size()): each activity of that launch
  // with a graph node goes to its node's op (op -1: to launch_slot). One launch per slot.
  void add_graph_launch(int launch_slot, int first, std::shared_ptr<const GraphOps> ops);
  // The instantiated graph's copy of a captured node: CUPTI names a replay's nodes by their
  // clones' ids, so a clone takes its original's op.
  void add_node_clone(std::uint64_t original, std::uint64_t clone);
  // The external id of slot 0 (ids are base + slot); ids outside [base, base + slots) belong to
  // someone else (another timer) and are ignored.
  void set_external_base(std::uint64_t base) { base_ = base; }

  // Attributes every activity seen so far and returns one entry per slot. Activities whose API
  // call has no correlation record, or whose id is not one of ours, are counted in unattributed().
  std::vector<SlotDeviceTime> resolve();
  int unattributed() const { return unattributed_; }
  // Activities of a graph launch whose node (or its original) has no op recorded: counted, not
  // attributed, neither to an op nor to the launching one.
  int unmatched_graph_nodes() const { return unmatched_graph_nodes_; }

  // The interval an op reports: a range or a slot with children spans its activities and its
  // descendants' (first start to last end); an op without children reports its first start and the sum of its activities' durations (the device time of
  // its kernels, without the launch gaps between them). False when nothing ran for it.
  static bool interval(const SlotDeviceTime& t, std::int64_t& start_ns, std::int64_t& dur_ns);

  // After resolve(): every attributed activity as a record of its slot (op = slot), its times
  // moved by `offset_ns` (device clock to the tracer's), in start order (then slot, then
  // correlation id, so equal starts keep one order).
  std::vector<DeviceWorkRecord> device_work(std::int64_t offset_ns) const;

 private:
  std::uint64_t base_ = 0;
  std::vector<int> parent_;
  std::vector<bool> range_;
  std::unordered_map<std::uint32_t, std::uint64_t> external_of_;
  std::vector<DeviceActivity> activities_;
  std::vector<int> slot_of_;  // per activity after resolve(): its slot, -1 unattributed
  int unattributed_ = 0;
  struct GraphLaunch {
    int first = 0;
    std::shared_ptr<const GraphOps> ops;
  };
  std::unordered_map<int, GraphLaunch> launches_;             // by launching slot
  std::unordered_map<std::uint64_t, std::uint64_t> original_;  // clone -> original node
  int unmatched_graph_nodes_ = 0;
  // The slot an activity attributed to `slot` by its correlation belongs to (-1: unmatched).
  int graph_slot(int slot, const DeviceActivity& a) const;
};

}  // namespace llmbench
