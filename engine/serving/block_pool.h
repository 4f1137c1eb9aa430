// The block pool of a paged KV cache shared by every sequence of a continuous batch: which
// blocks are free. Host bookkeeping only; the blocks' memory (one pool per layer for k and for
// v) lives in RaggedForward (ragged_forward.h), and a sequence's block table is the list of
// block ids this hands out. Blocks are handed out in descending order, so a sequence's blocks
// are not adjacent in the pool and every kernel must follow the table (as in kv_cache.h).
#pragma once
#include <cstdint>
#include <vector>

namespace llmbench {

class BlockPool {
 public:
  BlockPool(int n_blocks, int block_size);

  int block_size() const { return block_size_; }
  int total() const { return n_blocks_; }
  int free() const { return int(free_.size()); }
  int used() const { return n_blocks_ - free(); }
  // Blocks that hold `tokens` positions.
  int blocks_for(int tokens) const { return (tokens + block_size_ - 1) / block_size_; }

  // Appends n free blocks to `blocks` and returns true, or takes nothing and returns false
  // when fewer than n are free.
  bool allocate(int n, std::vector<std::int32_t>& blocks);
  // Returns every block of `blocks` to the pool and clears it.
  void release(std::vector<std::int32_t>& blocks);

 private:
  int n_blocks_, block_size_;
  std::vector<std::int32_t> free_;  // popped from the back
};

}  // namespace llmbench
