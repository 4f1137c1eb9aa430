// BlockPool: a free list, reference counts, and the prefix cache's hash map and LRU list.
#include "engine/serving/block_pool.h"

#include <algorithm>
#include <numeric>

#include "kernels/common/error.h"

namespace llmbench {

BlockPool::BlockPool(int n_blocks, int block_size, bool prefix_caching)
    : n_blocks_(n_blocks), block_size_(block_size), prefix_caching_(prefix_caching) {
  if (n_blocks <= 0 || block_size <= 0)
    throw BadInput("kv cache: block count and block size must be positive");
  free_.resize(std::size_t(n_blocks));
  std::iota(free_.begin(), free_.end(), 0);  // popped from the back: descending ids
  refs_.assign(std::size_t(n_blocks), 0);
  hash_of_.assign(std::size_t(n_blocks), 0);
  registered_.assign(std::size_t(n_blocks), false);
  lru_pos_.resize(std::size_t(n_blocks));
}

bool BlockPool::allocate(int n, std::vector<std::int32_t>& blocks) {
  if (n > free()) return false;
  for (int i = 0; i < n; ++i) {
    std::int32_t b;
    if (!free_.empty()) {
      b = free_.back();
      free_.pop_back();
    } else {
      // Evict the least recently freed cached block: its prefix is forgotten.
      b = lru_.front();
      lru_.pop_front();
      by_hash_.erase(hash_of_[std::size_t(b)]);
      registered_[std::size_t(b)] = false;
    }
    refs_[std::size_t(b)] = 1;
    blocks.push_back(b);
  }
  return true;
}

void BlockPool::release(std::vector<std::int32_t>& blocks) {
  // Tail first (as vLLM frees): a sequence's last block joins the LRU list before its first, so
  // under pressure a cached prefix is shortened from its end. Evicting the head first would make
  // every later block of the chain unreachable (a lookup stops at the first miss) while they
  // still sit in the cache, and the head is the block other prompts are most likely to share.
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    const std::int32_t b = *it;
    const auto i = std::size_t(b);
    LLMBENCH_CHECK(refs_[i] > 0, "block pool: a block was released twice");
    if (--refs_[i] > 0) continue;
    if (registered_[i]) {  // keeps its contents until an allocation needs it
      lru_pos_[i] = lru_.insert(lru_.end(), b);
    } else {
      free_.push_back(b);
    }
  }
  blocks.clear();
}

std::uint64_t BlockPool::chain_hash(std::uint64_t parent, const std::int32_t* tokens, int n) {
  // FNV-1a over the parent hash's and the tokens' bytes, then a final avalanche (splitmix64).
  // The parent enters only through its bytes: seeding with it as well let the first byte cancel
  // it (parents 0 and 7 hashed alike), and a lookup trusts the parent hash for the whole prefix
  // before this block (find() compares this block's tokens and its parent's hash, not the
  // tokens of every earlier block).
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&h](std::uint32_t v) {
    for (int k = 0; k < 4; ++k) {
      h ^= (v >> (8 * k)) & 0xffu;
      h *= 1099511628211ull;
    }
  };
  mix(std::uint32_t(parent)), mix(std::uint32_t(parent >> 32));
  for (int i = 0; i < n; ++i) mix(std::uint32_t(tokens[i]));
  h ^= h >> 30, h *= 0xbf58476d1ce4e5b9ull, h ^= h >> 27, h *= 0x94d049bb133111ebull,
      h ^= h >> 31;
  return h == 0 ? 1 : h;  // 0 is "no parent"
}

std::int32_t BlockPool::find(std::uint64_t hash, std::uint64_t parent,
                             const std::int32_t* tokens) const {
  auto it = by_hash_.find(hash);
  if (it == by_hash_.end() || it->second.parent != parent) return -1;
  return std::equal(it->second.tokens.begin(), it->second.tokens.end(), tokens) ? it->second.id
                                                                                : -1;
}

BlockPool::Match BlockPool::lookup(const std::vector<std::int32_t>& tokens, int max_blocks) const {
  Match m;
  if (!prefix_caching_) return m;
  const int full = std::min(max_blocks, int(tokens.size()) / block_size_);
  std::uint64_t parent = 0;
  for (int b = 0; b < full; ++b) {
    const std::int32_t* t = tokens.data() + std::size_t(b) * block_size_;
    const std::uint64_t h = chain_hash(parent, t, block_size_);
    const std::int32_t id = find(h, parent, t);
    if (id < 0) break;
    ++m.blocks;
    if (refs_[std::size_t(id)] == 0) ++m.free_blocks;
    m.hashes.push_back(h);
    parent = h;
  }
  return m;
}

void BlockPool::take(const Match& m, const std::vector<std::int32_t>& tokens,
                     std::vector<std::int32_t>& blocks) {
  for (int b = 0; b < m.blocks; ++b) {
    const std::uint64_t parent = b > 0 ? m.hashes[std::size_t(b) - 1] : 0;
    const std::int32_t id =
        find(m.hashes[std::size_t(b)], parent, tokens.data() + std::size_t(b) * block_size_);
    LLMBENCH_CHECK(id >= 0, "block pool: a matched prefix block was evicted before take()");
    const auto i = std::size_t(id);
    if (refs_[i]++ == 0) {  // revived from the LRU list
      lru_.erase(lru_pos_[i]);
    }
    blocks.push_back(id);
  }
}

bool BlockPool::register_block(std::int32_t id, std::uint64_t hash, std::uint64_t parent,
                               const std::int32_t* tokens) {
  if (!prefix_caching_) return false;
  const auto i = std::size_t(id);
  if (registered_[i]) return hash_of_[i] == hash;
  if (by_hash_.count(hash)) return false;  // another block holds this prefix
  by_hash_.emplace(hash, Cached{id, parent, std::vector<std::int32_t>(tokens, tokens + block_size_)});
  hash_of_[i] = hash;
  registered_[i] = true;
  return true;
}

}  // namespace llmbench
