// CUDA graphs for decode steps (--cuda-graphs on): which step shapes have a captured graph, and
// when to warm up, capture, replay, re-capture or give up. Written against GraphDriver, a narrow
// interface over the CUDA calls (stream capture, instantiation, launch), so a unit test drives
// the bookkeeping with a fake (tests/engine/test_cuda_graph.cpp); CudaBackend implements the
// driver with the CUDA runtime (cuda_graph_driver.cpp).
//
// The life of one step shape in StepGraphs::run:
//   first step       eager: a warm-up, so grow-only scratch buffers reach their size and
//                    libraries initialise before anything is recorded;
//   second step      captured (its launches recorded, not run), instantiated once, launched;
//   later steps      the instantiated graph replayed.
// A shape's graph is dropped, and the shape warmed up and captured again, when the driver's
// buffer epoch moves (a scratch buffer a recorded launch points into was reallocated). When a
// capture or an instantiation fails, the cache gives up for good: that step and every later one
// run eagerly (never a half-recorded graph), and note() says why in one line.
// A traced step (run with a Tracer) has graphs of its own, captured into a Tracer of their own
// so that a failed capture leaves no record behind: while capturing, a GraphOpRecorder learns
// the op of each node (graph_ops.h), and every launch of the graph, the captured one included,
// records those ops in the step's Tracer and hands the launch to its timer, which attributes the
// replay's kernels to them (Tracer::graph_launch). Untraced graphs stay unobserved.
// Not here: what a step launches (model.cpp), or how a replay sees the step's length: every
// kernel of a captured step reads it from device memory updated in place before the replay
// (Backend::kv_cache_write_at, attention_at, rope's positions).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "engine/model/trace.h"

namespace llmbench {

struct GraphOps;  // graph_ops.h

// One instantiated (executable) graph; what it holds is the driver's business.
class GraphExec {
 public:
  virtual ~GraphExec() = default;
};

// The CUDA calls StepGraphs needs, on the backend's one stream.
class GraphDriver {
 public:
  virtual ~GraphDriver() = default;
  // From now on the stream's launches are recorded instead of run. Throws llmbench::Error when
  // capture cannot start.
  virtual void begin_capture() = 0;
  // Stops recording and instantiates what was recorded; the stream runs eagerly again. Throws
  // llmbench::Error with the reason when the capture was invalidated (an unsupported call
  // inside it) or instantiation failed.
  virtual std::unique_ptr<GraphExec> end_capture() = 0;
  // Ends a capture abandoned by an exception and discards what it recorded, leaving the stream
  // usable eagerly; never throws.
  virtual void abort_capture() noexcept = 0;
  // Enqueues one replay of `graph` on the stream (asynchronous, like any launch).
  virtual void launch(GraphExec& graph) = 0;
  // Changes whenever a buffer that a recorded launch may point into is reallocated.
  virtual std::uint64_t buffer_epoch() const = 0;
  // While capturing: the nodes the capture added since begin_capture or the previous call, by
  // the ids CUPTI's records of a replay carry. Empty where the driver cannot name them (a
  // build without CUPTI): a traced replay then counts its kernels as unmatched.
  virtual std::vector<std::uint64_t> new_nodes() { return {}; }
};

// What changes a decode step's launch sequence: the sequences, the new tokens per sequence and
// the longest context the step's attention grid is sized for.
struct StepShape {
  int batch = 0;
  int n_new = 1;
  int max_len = 0;
  bool operator<(const StepShape& o) const {
    return std::tie(batch, n_new, max_len) < std::tie(o.batch, o.n_new, o.max_len);
  }
};

// How StepGraphs::run ran one step.
enum class StepRun {
  kWarmup,    // eagerly, before the shape's capture
  kCaptured,  // recorded, instantiated and launched
  kReplayed,  // the shape's graph launched again
  kEager,     // eagerly, because capturing failed earlier (note())
};

class StepGraphs {
 public:
  // `what` names the steps in note(), e.g. "decode step".
  StepGraphs(GraphDriver& driver, std::string what);
  ~StepGraphs();
  StepGraphs(const StepGraphs&) = delete;
  StepGraphs& operator=(const StepGraphs&) = delete;

  // Runs one step of `shape`: `launch` enqueues its launches on the driver's stream (the same
  // sequence every time for one shape, reading everything that changes between steps from
  // device memory). Eagerly, recorded into a graph, or as a replay, as the comment at the top
  // says. Exceptions from an eager `launch` and from GraphDriver::launch propagate; those of a
  // capture (inside `launch` or the driver's) turn into note() and an eager rerun.
  StepRun run(const StepShape& shape, const std::function<void()>& launch);
  // The same for a step that may be traced: `launch(tracer)` enqueues the step's launches with
  // their op scopes in `tracer`; `length` is the step's context length (cached positions).
  // With a Tracer the shape has a graph of its own, whose capture runs `launch` with a capture
  // Tracer and whose every launch goes through Tracer::graph_launch (the comment at the top);
  // the ops' analytic work at other lengths is learned from the traced warm-up step before the
  // capture (learn_work_per_position). Without a Tracer this is run() above.
  StepRun run(const StepShape& shape, const std::function<void(Tracer*)>& launch,
              Tracer* tracer, int length = 0);

  // Counts over this object's life.
  int warmups() const { return warmups_; }
  int captures() const { return captures_; }
  int replays() const { return replays_; }
  int eager_steps() const { return eager_; }
  // Of captures() + replays(): the graph launches of traced steps.
  int traced_launches() const { return traced_launches_; }
  // True once a capture failed: every later step runs eagerly.
  bool failed() const { return failed_; }
  // One line: why graphs stopped being used ("" while nothing failed).
  const std::string& note() const { return note_; }
  // Shapes that hold an instantiated graph now.
  std::size_t graphs() const;

 private:
  struct Entry {
    bool warmed = false;
    std::uint64_t epoch = 0;
    std::unique_ptr<GraphExec> exec;
    std::shared_ptr<const GraphOps> ops;  // a traced shape's: the op of each node
    std::vector<OpRecord> warm_ops;       // a traced shape's warm-up records, at warm_length
    int warm_length = 0;
  };
  // Captures `launch` into e.exec (and e.ops when `tracer`); false (note_ set) when it failed.
  bool capture(Entry& e, const StepShape& shape, const std::function<void(Tracer*)>& launch,
               Tracer* tracer, int length);
  // Enqueues e's graph, through the Tracer's graph_launch when traced.
  void launch_graph(Entry& e, Tracer* tracer, int length);

  GraphDriver& driver_;
  std::string what_;
  std::map<std::pair<StepShape, bool>, Entry> entries_;  // by shape and traced
  bool failed_ = false;
  std::string note_;
  int warmups_ = 0, captures_ = 0, replays_ = 0, eager_ = 0, traced_launches_ = 0;
};

}  // namespace llmbench
