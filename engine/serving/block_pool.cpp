// BlockPool: a free list.
#include "engine/serving/block_pool.h"

#include <numeric>

#include "kernels/common/error.h"

namespace llmbench {

BlockPool::BlockPool(int n_blocks, int block_size) : n_blocks_(n_blocks), block_size_(block_size) {
  if (n_blocks <= 0 || block_size <= 0)
    throw BadInput("kv cache: block count and block size must be positive");
  free_.resize(std::size_t(n_blocks));
  std::iota(free_.begin(), free_.end(), 0);  // popped from the back: descending ids
}

bool BlockPool::allocate(int n, std::vector<std::int32_t>& blocks) {
  if (n > free()) return false;
  for (int i = 0; i < n; ++i) {
    blocks.push_back(free_.back());
    free_.pop_back();
  }
  return true;
}

void BlockPool::release(std::vector<std::int32_t>& blocks) {
  for (auto b : blocks) free_.push_back(b);
  LLMBENCH_CHECK(int(free_.size()) <= n_blocks_, "block pool: a block was released twice");
  blocks.clear();
}

}  // namespace llmbench
