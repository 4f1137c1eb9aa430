// A deterministic fuzz-style test of checkpoint loading: a valid tiny checkpoint (one per dtype)
// is mutated at random (bit flips, truncation, random header bytes, a changed length field, JSON
// values replaced with wrong types or extreme numbers, shuffled offsets, random data bytes, a
// damaged shard index or config.json) and every result is opened and read completely through
// SafetensorsFile and CheckpointWeights. Each outcome must be success or llmbench::Error
// (BadInput for damage): never a crash, a sanitizer report, or another exception type.
// ctest runs it twice: plain, and built with AddressSanitizer + UBSan (tests/CMakeLists.txt).
// Deliberately not: coverage-guided (libFuzzer) or randomly seeded; iteration i is the same on
// every run, and a failure names it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <map>

#include "engine/checkpoint/hf_checkpoint.h"
#include "engine/model/rng.h"
#include "engine/checkpoint/safetensors.h"
#include "tests/engine/checkpoint_files.h"

namespace llmbench {

namespace {

using nlohmann::json;
using namespace llmbench::test;

constexpr int kIterations = 4000;
constexpr std::uint64_t kSeed = 0xF022;

// Draws from the counter-based generator of engine/model/rng.h.
class FuzzRng {
 public:
  explicit FuzzRng(std::uint64_t seed) : key_(stream_key(seed, fnv1a64("fuzz"))) {}
  std::uint64_t next() { return stream_u64(key_, index_++); }
  std::uint64_t below(std::uint64_t n) { return n ? next() % n : 0; }
  bool percent(int p) { return below(100) < std::uint64_t(p); }
  template <class T>
  const T& pick(const std::vector<T>& v) { return v[below(v.size())]; }

 private:
  std::uint64_t key_, index_ = 0;
};

enum class Mutation { kBitFlips, kTruncate, kHeaderBytes, kLengthField, kJsonValue,
                      kOffsetShuffle, kDataBytes, kIndex, kConfig, kCount };
const char* const kMutationNames[] = {"bit flips", "truncate", "header bytes", "length field",
                                      "json value", "offset shuffle", "data bytes", "index",
                                      "config"};

// Values of the wrong type, or extreme, for any JSON field.
std::vector<json> weird_values() {
  return {nullptr, true, false, "", "x", "F64", "I8", "F32", "F16", "BF16", -1, 0, 1, 7,
          2147483647, -9223372036854775807LL - 1, 9223372036854775807LL,
          18446744073709551615ULL,
          std::uint64_t(1) << 32, std::uint64_t(1) << 53, 1e300, -1e300, 0.5, -0.0,
          json::array(), json{1}, json{0, 0}, json{1, 2, 3}, json{-1, 4},
          json{18446744073709551615ULL, 18446744073709551615ULL}, json::object(),
          json{{"dtype", "F32"}}, json{json{json{1}}}};
}

// A checkpoint split into the pieces the mutations work on.
struct Sample {
  std::string header;  // the JSON header text
  std::string data;    // the data section
  json config;         // config.json
};

// A JSON field of `header` (a random tensor entry, or one of its fields or their elements)
// replaced by a weird value or removed.
std::string mutate_json_value(FuzzRng& rng, const std::string& header) {
  json j = json::parse(header);
  std::vector<std::string> names;
  for (const auto& [name, value] : j.items()) names.push_back(name);
  json& entry = j[rng.pick(names)];
  static const std::vector<json> weird = weird_values();
  static const std::vector<std::string> fields = {"dtype", "shape", "data_offsets", "extra"};
  const std::string& field = rng.pick(fields);
  switch (rng.below(4)) {
    case 0: entry = rng.pick(weird); break;
    case 1: if (entry.is_object()) entry.erase(field); break;
    case 2: if (entry.is_object()) entry[field] = rng.pick(weird); break;
    default:  // one element of shape or data_offsets
      if (entry.is_object() && entry.contains(field) && entry[field].is_array() &&
          !entry[field].empty())
        entry[field][rng.below(entry[field].size())] = rng.pick(weird);
  }
  return j.dump();
}

// data_offsets permuted among tensors, or one tensor's offsets shifted.
std::string shuffle_offsets(FuzzRng& rng, const std::string& header) {
  json j = json::parse(header);
  std::vector<json*> entries;
  for (auto& [name, value] : j.items())
    if (name != "__metadata__") entries.push_back(&value);
  if (rng.percent(50)) {
    for (std::size_t i = entries.size(); i > 1; --i)  // Fisher-Yates
      std::swap((*entries[i - 1])["data_offsets"], (*entries[rng.below(i)])["data_offsets"]);
  } else {
    json& offsets = (*entries[rng.below(entries.size())])["data_offsets"];
    const auto shift = std::int64_t(rng.below(17)) - 8;
    for (auto& o : offsets) o = o.get<std::int64_t>() + shift;
  }
  return j.dump();
}

// A random valid-looking or broken index.json for a single shard named "shard.safetensors".
json mutate_index(FuzzRng& rng, const std::vector<TensorSpec>& specs) {
  json map = json::object();
  for (const auto& s : specs) map[s.name] = "shard.safetensors";
  static const std::vector<json> files = {"shard.safetensors", "missing.safetensors", "", ".",
                                          "..", "/", "config.json", 3, nullptr, json::array()};
  static const std::vector<json> weird = weird_values();
  json index = {{"weight_map", map}};
  switch (rng.below(4)) {
    case 0: break;  // valid
    case 1: index["weight_map"][rng.pick(specs).name] = rng.pick(files); break;
    case 2: index["weight_map"]["not.a.tensor"] = rng.pick(files); break;
    default: index[rng.percent(50) ? "weight_map" : "metadata"] = rng.pick(weird);
  }
  return index;
}

json mutate_config(FuzzRng& rng, json config) {
  static const std::vector<std::string> keys = {
      "architectures", "model_type", "hidden_size", "num_hidden_layers", "num_attention_heads",
      "num_key_value_heads", "intermediate_size", "vocab_size", "max_position_embeddings",
      "rope_theta", "rms_norm_eps", "tie_word_embeddings", "head_dim", "rope_scaling",
      "sliding_window", "attention_bias", "hidden_act"};
  static const std::vector<json> weird = weird_values();
  const std::string& key = rng.pick(keys);
  if (rng.percent(20)) config.erase(key);
  else config[key] = rng.pick(weird);
  return config;
}

// The directory the mutated checkpoints are written to: on tmpfs (/dev/shm) where there is
// one, because thousands of truncated and rewritten files on a disk file system (ext4 mounted
// with discard, say) can cost several milliseconds each, which would be most of the test's
// time; else in the build's scratch directory. Removed when the test ends.
struct WorkDir {
  fs::path path;
  WorkDir() {
    std::error_code ec;
    const fs::path shm = "/dev/shm";
    path = shm / ("llmbench-" LLMBENCH_FUZZ_GROUP "-" + std::to_string(::getpid()));
    if (!fs::is_directory(shm, ec) || !fs::create_directories(path, ec))
      path = fresh_dir(LLMBENCH_FUZZ_GROUP, "work");
  }
  ~WorkDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;
};

// Opens and reads everything; returns "" for success or BadInput/Error, else what went wrong.
template <class F>
std::string outcome_of(F&& f, bool& ok) {
  ok = false;
  try {
    f();
    ok = true;
  } catch (const Error&) {  // BadInput included: the only acceptable failures
  } catch (const std::exception& e) {
    return std::string("unexpected exception: ") + e.what();
  } catch (...) {
    return "unexpected non-std exception";
  }
  return "";
}

}  // namespace

TEST(FuzzSafetensors, MutatedCheckpointsFailCleanly) {
  // Small enough that thousands of files take seconds even under AddressSanitizer; with every
  // tensor kind (biases, an untied head) so shapes of rank 1 and 2 are both exercised.
  ModelConfig c;
  c.name = "fuzz";
  c.dim = 8;
  c.n_layers = 1;
  c.n_heads = 2;
  c.n_kv_heads = 1;
  c.ffn_dim = 12;
  c.vocab_size = 10;
  c.max_seq_len = 16;
  c.qkv_bias = true;
  const auto specs = hf_tensor_specs(c);

  // One valid sample per dtype, written by the real writer.
  std::vector<Sample> samples;
  const fs::path base = fresh_dir(LLMBENCH_FUZZ_GROUP, "base");
  for (DType dtype : {DType::kFp32, DType::kFp16, DType::kBf16}) {
    const fs::path path = base / "model.safetensors";
    write_safetensors(path.string(), specs, RandomWeights(3), dtype, {{"format", "pt"}});
    const std::string bytes = read_bytes(path);
    std::uint64_t len = 0;
    for (int i = 7; i >= 0; --i) len = len << 8 | std::uint8_t(bytes[std::size_t(i)]);
    samples.push_back({bytes.substr(8, len), bytes.substr(8 + len), hf_config_json(c)});
  }

  const WorkDir work;
  const fs::path& dir = work.path;
  FuzzRng rng(kSeed);
  std::map<Mutation, std::array<int, 2>> counts;  // [failed cleanly, loaded]
  int failures = 0;
  bool used_index = false;
  std::string written_config;
  for (int iter = 0; iter < kIterations && failures < 10; ++iter) {
    const Sample& sample = samples[std::size_t(iter) % samples.size()];
    const auto kind = Mutation(rng.below(std::uint64_t(Mutation::kCount)));
    std::string header = sample.header, data = sample.data;
    std::uint64_t header_len = header.size();
    std::string bytes;
    json config = sample.config;
    bool use_index = false;
    json index;

    // Mutations of the header text and length field come first, whole-file ones last.
    switch (kind) {
      case Mutation::kHeaderBytes:
        for (std::uint64_t n = 1 + rng.below(4); n > 0; --n) {
          static const std::string alphabet = "{}[]\":, 0123456789-+.eE\\ntrufalsFBI\x01\xff";
          header[rng.below(header.size())] =
              rng.percent(50) ? alphabet[rng.below(alphabet.size())] : char(rng.below(256));
        }
        break;
      case Mutation::kLengthField: {
        const std::uint64_t size = header.size() + data.size();
        const std::vector<std::uint64_t> lengths = {0, 1, 2, header.size() - 1, header.size() + 1,
                                                    header.size() + rng.below(64), size, size + 1,
                                                    std::uint64_t(1) << 63, rng.next()};
        header_len = rng.pick(lengths);
        break;
      }
      case Mutation::kJsonValue: header = mutate_json_value(rng, header); break;
      case Mutation::kOffsetShuffle: header = shuffle_offsets(rng, header); break;
      case Mutation::kDataBytes:
        for (std::uint64_t n = 1 + rng.below(16); n > 0; --n)
          data[rng.below(data.size())] = char(rng.below(256));
        break;
      case Mutation::kIndex:
        use_index = true;
        index = mutate_index(rng, specs);
        break;
      case Mutation::kConfig: config = mutate_config(rng, config); break;
      default: break;
    }
    if (kind == Mutation::kJsonValue || kind == Mutation::kOffsetShuffle) {
      header.append(rng.below(8), ' ');  // padding, as writers add it
      header_len = header.size();
    }
    bytes = safetensors_bytes(header, data, header_len);
    if (kind == Mutation::kBitFlips) {
      for (std::uint64_t n = 1 + rng.below(8); n > 0; --n) {
        // Mostly in the length field and header, where a flip changes the structure.
        const std::uint64_t span = rng.percent(75) ? 8 + sample.header.size() : bytes.size();
        const std::uint64_t at = rng.below(span);
        bytes[at] = char(bytes[at] ^ char(1u << rng.below(8)));
      }
    }
    if (kind == Mutation::kTruncate) bytes.resize(rng.below(bytes.size()));

    // The directory holds config.json and either model.safetensors or an index and its shard.
    // Files are only removed or rewritten when they change: file-system churn, not parsing,
    // is most of this test's time.
    if (use_index && !used_index) fs::remove(dir / "model.safetensors");
    if (!use_index && used_index) {
      fs::remove(dir / "model.safetensors.index.json");
      fs::remove(dir / "shard.safetensors");
    }
    used_index = use_index;
    const fs::path file = dir / (use_index ? "shard.safetensors" : "model.safetensors");
    write_bytes(file, bytes);
    if (use_index) write_bytes(dir / "model.safetensors.index.json", index.dump());
    const std::string config_text = config.dump();
    if (config_text != written_config) {
      write_bytes(dir / "config.json", config_text);
      written_config = config_text;
    }

    bool file_ok = false, checkpoint_ok = false;
    std::string problem = outcome_of([&] {
      const SafetensorsFile f(file.string());
      for (const auto& t : f.tensors()) {
        std::vector<float> values(std::size_t(t.numel()));
        f.read_f32(t, values.data());
      }
    }, file_ok);
    if (problem.empty())
      problem = outcome_of([&] {
        const ModelConfig read = read_hf_config(dir.string());
        const CheckpointWeights weights(dir.string(), read);
        for (const auto& spec : hf_tensor_specs(read)) {
          std::vector<float> values(std::size_t(spec.numel()));
          weights.fill(spec, values.data());
        }
      }, checkpoint_ok);
    if (!problem.empty()) {
      ++failures;
      ADD_FAILURE() << "iteration " << iter << " (" << kMutationNames[int(kind)]
                    << "): " << problem;
    }
    // Damage to tensor values alone is not detectable, and must not be reported.
    if (kind == Mutation::kDataBytes) {
      EXPECT_TRUE(file_ok && checkpoint_ok) << "iteration " << iter << ": data bytes only";
    }
    ++counts[kind][checkpoint_ok ? 1 : 0];
  }

  // Every mutation kind ran and produced clean failures; some mutations are harmless.
  int loaded = 0;
  for (int k = 0; k < int(Mutation::kCount); ++k) {
    const auto [failed, ok] = counts[Mutation(k)];
    std::printf("%-15s %5d failed cleanly, %5d loaded\n", kMutationNames[k], failed, ok);
    if (Mutation(k) != Mutation::kDataBytes) {
      EXPECT_GT(failed, 0) << kMutationNames[k];
    }
    loaded += ok;
  }
  EXPECT_GT(loaded, 0);
}

}  // namespace llmbench
