// GraphOpRecorder (see graph_ops.h).
#include "engine/model/graph_ops.h"

#include <cstring>

namespace llmbench {

void GraphOpRecorder::mark(int innermost) {
  // A node id seen twice keeps its first op: the driver names each node once.
  for (const std::uint64_t node : new_nodes_()) op_of_node_.emplace(node, innermost);
}

GraphOps GraphOpRecorder::finish(const std::vector<OpRecord>& records) {
  mark(-1);  // nodes added after the last scope ended belong to the launching scope
  GraphOps g;
  g.ops.reserve(records.size());
  for (const OpRecord& r : records) {
    OpRecord op;
    op.name = r.name;
    op.category = r.category;
    op.layer = r.layer;
    op.depth = r.depth;
    op.parent = r.parent;
    op.flops = r.flops;
    op.bytes = r.bytes;
    g.ops.push_back(op);
  }
  g.op_of_node = std::move(op_of_node_);
  op_of_node_.clear();
  return g;
}

std::int64_t GraphOps::flops_at(std::size_t i, int at) const {
  const std::int64_t per = flops_per_position.empty() ? 0 : flops_per_position[i];
  return ops[i].flops + per * (at - length);
}

std::int64_t GraphOps::bytes_at(std::size_t i, int at) const {
  const std::int64_t per = bytes_per_position.empty() ? 0 : bytes_per_position[i];
  return ops[i].bytes + per * (at - length);
}

bool learn_work_per_position(GraphOps& g, const std::vector<OpRecord>& other, int other_length) {
  if (other.size() != g.ops.size() || other_length == g.length) return false;
  for (std::size_t i = 0; i < other.size(); ++i)
    if (std::strcmp(other[i].name, g.ops[i].name) != 0 || other[i].layer != g.ops[i].layer)
      return false;
  const std::int64_t dl = g.length - other_length;
  g.flops_per_position.resize(other.size());
  g.bytes_per_position.resize(other.size());
  for (std::size_t i = 0; i < other.size(); ++i) {
    g.flops_per_position[i] = (g.ops[i].flops - other[i].flops) / dl;
    g.bytes_per_position[i] = (g.ops[i].bytes - other[i].bytes) / dl;
  }
  return true;
}

}  // namespace llmbench
