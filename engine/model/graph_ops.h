// The ops of a captured decode-step graph, so that a traced step replayed from its graph stores
// its kernels under their ops as an eager traced step does (issue 44; docs/metrics.md, "Op
// times in a replayed graph"). While a traced step is captured, GraphOpRecorder learns which op
// was innermost when each graph node was added: the capture's Tracer marks every scope change,
// and the graph driver names the nodes the capture added since the previous mark, by the ids
// CUPTI's records of a replay carry (graphNodeId). The result, GraphOps, is the step's op
// records as a template and node -> op. A replay records the template's ops inside the open
// scope (Tracer::graph_launch), and the CUPTI timer gives each kernel of the replay to its op by
// its graph node (ActivityAttribution::add_graph_launch).
// Plain C++, tested without a device (tests/engine/test_cuda_graph.cpp,
// test_activity_attribution.cpp). Not here: the CUDA and
// CUPTI calls (cuda_graph_driver.cpp, cupti_timer.cpp) or when to capture (cuda_graph.h).
#pragma once
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "engine/model/trace.h"

namespace llmbench {

struct GraphOps {
  // The captured step's records in the order they began: name, category, layer, analytic work;
  // depth counts from 0 for the capture's outermost scopes, parent indexes `ops` (-1: the scope
  // the graph is launched in). Times, phase and step are the replay's.
  std::vector<OpRecord> ops;
  // Each node's op (an index into `ops`; -1: added while no op was open, so it belongs to the
  // scope the graph is launched in), keyed by the node's CUPTI id.
  std::unordered_map<std::uint64_t, int> op_of_node;
  // The captured step's context length (cached positions), and how each op's analytic work
  // grows per cached position (attention's work is affine in it), learned from a traced step
  // at another length (learn_work_per_position); empty: the captured work at every length.
  int length = 0;
  std::vector<std::int64_t> flops_per_position, bytes_per_position;

  // Op i's analytic work in a replay at context length `at`.
  std::int64_t flops_at(std::size_t i, int at) const;
  std::int64_t bytes_at(std::size_t i, int at) const;
};

// Sets g's work per position from `other`, the same ops traced eagerly at `other_length` (the
// shape's warm-up step); false, leaving g as it was, when they are not the same ops or the two
// lengths are equal.
bool learn_work_per_position(GraphOps& g, const std::vector<OpRecord>& other, int other_length);

class GraphOpRecorder {
 public:
  // `new_nodes`: the CUPTI ids of the nodes the capture added since its previous call
  // (GraphDriver::new_nodes).
  explicit GraphOpRecorder(std::function<std::vector<std::uint64_t>()> new_nodes)
      : new_nodes_(std::move(new_nodes)) {}

  // Called by the capture's Tracer before a scope begins and before it ends, with the innermost
  // open record then (-1: none): the nodes added since the previous mark were launched by it.
  void mark(int innermost);
  // After the capture's last scope ended, still capturing: the capture Tracer's records (all of
  // them, from index 0) as the graph's ops, with every node seen so far.
  GraphOps finish(const std::vector<OpRecord>& records);

 private:
  std::function<std::vector<std::uint64_t>()> new_nodes_;
  std::unordered_map<std::uint64_t, int> op_of_node_;
};

}  // namespace llmbench
