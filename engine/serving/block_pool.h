// The block pool of a paged KV cache shared by every sequence of a continuous batch: which
// blocks are free, and (with prefix caching) which full blocks hold which tokens. Host
// bookkeeping only; the blocks' memory (one pool per layer for k and for v) lives in
// RaggedForward (ragged_forward.h), and a sequence's block table is the list of block ids this
// hands out. Blocks are handed out in descending order, so a sequence's blocks are not adjacent
// in the pool and every kernel must follow the table (as in kv_cache.h).
//
// Automatic prefix caching (as vLLM's): a full block whose keys and values are written is
// registered under a hash chained over its tokens and its parent block's hash, so equal hashes
// mean equal whole prefixes. A new sequence takes a reference on every cached block of its
// longest cached prefix (match_prefix) instead of computing it; a block in use by several
// sequences is shared, never copied (a reference count), and only full blocks are shared, so
// no sequence ever writes into a shared block. A block whose last reference goes keeps its
// contents and hash, on an LRU list, until an allocation needs it (blocks never cached are
// handed out first, then the least recently freed cached one, whose hash is dropped). A
// sequence's blocks are freed tail first, so eviction shortens a cached prefix from its end.
#pragma once
#include <cstdint>
#include <list>
#include <unordered_map>
#include <vector>

namespace llmbench {

class BlockPool {
 public:
  BlockPool(int n_blocks, int block_size, bool prefix_caching = false);

  int block_size() const { return block_size_; }
  int total() const { return n_blocks_; }
  // Blocks an allocation can take now: never-cached free blocks plus cached ones held by nobody.
  int free() const { return int(free_.size() + lru_.size()); }
  // Blocks referenced by at least one sequence.
  int used() const { return n_blocks_ - free(); }
  // Blocks holding a registered prefix (in use or not).
  int cached() const { return int(by_hash_.size()); }
  bool prefix_caching() const { return prefix_caching_; }
  // Blocks that hold `tokens` positions.
  int blocks_for(int tokens) const { return (tokens + block_size_ - 1) / block_size_; }

  // Appends n free blocks to `blocks` and returns true, or takes nothing and returns false
  // when fewer than n are free.
  bool allocate(int n, std::vector<std::int32_t>& blocks);
  // Drops one reference on every block of `blocks` and clears it.
  void release(std::vector<std::int32_t>& blocks);

  // The hash of a full block: its tokens after the prefix whose last block hashed to `parent`
  // (0 for the first block).
  static std::uint64_t chain_hash(std::uint64_t parent, const std::int32_t* tokens, int n);

  struct Match {
    int blocks = 0;       // cached blocks of the longest cached prefix
    int free_blocks = 0;  // of which held by nobody now (taking them lowers free())
    std::vector<std::uint64_t> hashes;  // their chained hashes
  };
  // The longest run of cached full blocks that starts `tokens`, at most max_blocks long.
  Match lookup(const std::vector<std::int32_t>& tokens, int max_blocks) const;
  // Takes a reference on the blocks of `m` (from lookup(), with nothing changed in between) and
  // appends their ids to `blocks`.
  void take(const Match& m, const std::vector<std::int32_t>& tokens,
            std::vector<std::int32_t>& blocks);
  // Registers block `id` (full, its k and v written) under `hash` = chain_hash(parent, tokens)
  // with its `parent` hash (0 for a first block) and `tokens`; false when another block already
  // holds that prefix (this one stays private).
  bool register_block(std::int32_t id, std::uint64_t hash, std::uint64_t parent,
                      const std::int32_t* tokens);

 private:
  struct Cached {
    std::int32_t id;
    std::uint64_t parent;              // the parent block's hash (0: a first block)
    std::vector<std::int32_t> tokens;  // compared on lookup with `parent`: a hash collision of
                                       // this block is never a hit
  };
  // The cached block for `hash` whose parent hashed to `parent` and that holds exactly
  // `tokens`, or -1.
  std::int32_t find(std::uint64_t hash, std::uint64_t parent, const std::int32_t* tokens) const;

  int n_blocks_, block_size_;
  bool prefix_caching_;
  std::vector<std::int32_t> free_;  // never cached (or evicted), popped from the back
  std::vector<int> refs_;           // per block
  std::vector<std::uint64_t> hash_of_;  // per block, valid when registered_[id]
  std::vector<bool> registered_;
  std::unordered_map<std::uint64_t, Cached> by_hash_;
  std::list<std::int32_t> lru_;  // cached blocks held by nobody, least recently freed first
  std::vector<std::list<std::int32_t>::iterator> lru_pos_;  // per block, valid when in lru_
};

}  // namespace llmbench
