// An imported trace in memory, between reading a foreign file (import_nsys, import_chrome) and
// writing it into the store (trace_writer): processes, threads, tracks, slices with their args,
// flows between slices, counter samples, and how many input records were left out and why.
// Readers fill it completely before the database is touched, so bad input never reaches it.
// Not here: nesting (trace_nesting.h) or SQL (trace_writer.h).
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

namespace llmbench {

// Names repeat (every kernel launch, every aten::add): slices hold indices into one pool.
class StringPool {
 public:
  std::uint32_t intern(std::string_view s) {
    auto it = index_.find(s);
    if (it != index_.end()) return it->second;
    const auto id = std::uint32_t(values_.size());
    values_.emplace_back(s);
    index_.emplace(values_.back(), id);
    return id;
  }
  const std::string& operator[](std::uint32_t id) const { return values_[id]; }

 private:
  struct Hash {  // lets find() take a string_view without building a std::string
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::string> values_;
  std::unordered_map<std::string, std::uint32_t, Hash, std::equal_to<>> index_;
};

using ArgValue = std::variant<std::int64_t, double, std::string>;

// One row of the `arg` table: Perfetto's flat_key ("args.grid") and key ("args.grid[0]"),
// both StringPool ids (keys repeat on every event).
struct TraceArg {
  std::uint32_t flat_key, key;
  ArgValue value;
};

struct TraceProcess {
  std::optional<std::int64_t> pid;  // NULL when the source names a process by text only
  std::string name;
};

struct TraceThread {
  std::optional<std::int64_t> tid;
  std::string name;
  std::size_t process = 0;
};

struct TraceTrack {
  std::string name;
  std::string type;  // 'thread' | 'process' | 'gpu' | 'counter' | 'global'
  std::optional<std::size_t> thread, process;
  std::optional<std::int64_t> device_id, stream_id;
};

inline constexpr std::int64_t kNoParent = -1;

struct TraceSlice {
  std::int64_t ts = 0, dur = 0;  // integer ns
  std::size_t track = 0;
  std::uint32_t category = 0, name = 0;  // StringPool ids; category 0 is "" (stored as NULL)
  std::optional<std::int64_t> correlation_id, bytes, flops;
  std::uint32_t arg_begin = 0, arg_count = 0;  // into ImportedTrace::args
  // Filled by compute_nesting().
  int depth = 0;
  std::int64_t parent = kNoParent;  // slice index
};

struct TraceFlow {
  std::size_t out, in;  // slice indices: from (e.g. the launch) to (e.g. the kernel)
};

struct TraceCounter {
  std::int64_t ts;
  std::size_t track;
  double value;
};

struct ImportedTrace {
  ImportedTrace() { strings.intern(""); }

  StringPool strings;
  std::vector<TraceProcess> processes;
  std::vector<TraceThread> threads;
  std::vector<TraceTrack> tracks;
  std::vector<TraceSlice> slices;
  std::vector<TraceArg> args;
  std::vector<TraceFlow> flows;
  std::vector<TraceCounter> counters;
  // Input records left out, by reason ("E without a matching B": 2). Printed and stored.
  std::map<std::string, std::int64_t> skipped;
  // Things worth knowing that lost nothing ("slices moved to overlap tracks": 3).
  std::map<std::string, std::int64_t> notes;
  nlohmann::json metadata = nlohmann::json::object();  // the source's own metadata
  std::string source_version;

  void skip(const std::string& reason, std::int64_t n = 1) { skipped[reason] += n; }
  void note(const std::string& what, std::int64_t n = 1) { notes[what] += n; }

  // Appends a slice; its args are added with add_arg() right after.
  TraceSlice& add_slice(std::int64_t ts, std::int64_t dur, std::size_t track,
                        std::string_view category, std::string_view name) {
    TraceSlice& s = slices.emplace_back();
    s.ts = ts;
    s.dur = dur;
    s.track = track;
    s.category = strings.intern(category);
    s.name = strings.intern(name);
    s.arg_begin = std::uint32_t(args.size());
    return s;
  }
  // Adds an arg to the slice added last.
  void add_arg(std::string_view flat_key, std::string_view key, ArgValue value) {
    args.push_back({strings.intern(flat_key), strings.intern(key), std::move(value)});
    ++slices.back().arg_count;
  }
  void add_arg(std::string_view key, ArgValue value) { add_arg(key, key, std::move(value)); }
};

}  // namespace llmbench
