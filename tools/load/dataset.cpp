// What the dataset readers share (see dataset.h): the length filter, the seeded order, reading
// the file, and the dispatch by --dataset-name.
#include "tools/load/dataset.h"

#include <fstream>
#include <random>
#include <sstream>

#include "kernels/common/error.h"

namespace llmbench {

std::string LengthFilter::reject(int prompt_len, int output_len) const {
  if (prompt_len < min_len || output_len < min_len) return "too short";
  if (prompt_len > max_prompt_len || prompt_len + output_len > max_total_len) return "too long";
  return "";
}

std::vector<std::size_t> seeded_order(std::size_t n, std::uint64_t seed) {
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::mt19937_64 rng(seed);
  for (std::size_t i = n; i > 1; --i) {
    const std::size_t j = std::size_t(rng() % i);  // the modulo bias is 1 in 2^54 at most
    std::swap(order[i - 1], order[j]);
  }
  return order;
}

std::string read_dataset_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw BadInput("--dataset-path: cannot read '" + path + "'");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Workload read_dataset(const DatasetOptions& o) {
  if (o.path.empty()) throw BadInput("--dataset-path: required with --dataset-name " + o.name);
  if (o.name == "sharegpt") return read_sharegpt(o);
  if (o.name == "jsonl") return read_jsonl(o);
  if (o.name == "mooncake") return read_mooncake(o);
  throw BadInput("--dataset-name: expected random, sharegpt, jsonl or mooncake, got '" + o.name +
                 "'");
}

}  // namespace llmbench
