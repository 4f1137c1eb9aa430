// Per-op instrumentation: what one traced op or range is (OpRecord), how a backend times it
// (OpTimer: host clock on the CPU, CUDA events on the GPU), the Tracer that collects records
// for one traced repetition, and OpScope, the one RAII scope every op of the forward pass runs
// in. OpScope also pushes an NVTX range (domain "llmbench", payload = layer index) whenever the
// NVTX3 headers were found at build time, traced or not, so Nsight Systems shows the same names.
// Not here: storing records (tools/store/store.cpp) or analysing them (queries/).
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench {

struct GraphOps;         // graph_ops.h
class GraphOpRecorder;   // graph_ops.h

enum class TraceLevel { kOff, kSteps, kOps };  // --trace off|steps|ops
enum class OpCategory { kRange, kGemm, kAttention, kNorm, kElementwise, kCopy, kTransfer, kSample };
enum class Phase { kPrefill, kDecode };
// --timer: how traced ops are timed. device (the correct default): the host clock on the CPU
// backend, whose ops are synchronous; on the CUDA backend CUPTI's record of each kernel
// (cupti_timer.h) when llmbench was built with CUPTI, else CUDA event pairs. cupti and events
// (CUDA only) name one of the two explicitly; the event pair around every op is the older way,
// kept to compare with (it slows short ops). host_nosync: the host clock at op start and stop
// with no synchronisation, the naive way; on CUDA that measures how long an op took to enqueue
// and blames queued work on the next op that waits for the device (a to_host copy). Diagnostic
// only, wrong on purpose (docs/variants.md).
enum class TimerMode { kDevice, kHostNoSync, kCupti, kEvents };

std::string_view trace_level_name(TraceLevel level);
std::optional<TraceLevel> parse_trace_level(std::string_view s);
std::string_view category_name(OpCategory c);
std::string_view phase_name(Phase p);
std::string_view timer_mode_name(TimerMode m);  // "device" | "host-nosync" | "cupti" | "events"
std::optional<TimerMode> parse_timer_mode(std::string_view s);

// The warning every output of a host-nosync run carries (stderr, and beside its figures).
inline constexpr std::string_view kHostNoSyncWarning =
    "timer host-nosync: op times are host enqueue times without synchronisation "
    "\u2014 wrong on purpose (diagnostic)";

// One interval of a traced repetition. Times are ns since the tracer's origin (the run's).
struct OpRecord {
  const char* name = "";          // a string literal: records never own their names
  OpCategory category = OpCategory::kRange;
  int layer = -1;                 // -1 outside decoder layers
  Phase phase = Phase::kPrefill;
  int step = 0;                   // 0 for prefill, 1.. for decode steps
  int depth = 0;                  // nesting depth; 0 for the step ranges
  int parent = -1;                // index of the enclosing record, -1 at depth 0
  std::int64_t start_ns = 0;      // when the op ran (device time on the GPU)
  std::int64_t dur_ns = 0;
  std::int64_t enqueue_ns = 0;    // host time at which it was issued
  std::int64_t flops = 0;         // analytic work (0 for ranges)
  std::int64_t bytes = 0;         // analytic bytes read + written (0 for ranges)
  bool replayed = false;          // one of a replayed graph's ops (Tracer::graph_launch): it
                                  // launched nothing itself and pushed no NVTX range
};

// One kernel, memcpy or memset the device ran for a traced op (the CUPTI op timer on CUDA):
// stored as a child slice of the op's event on a GPU track (docs/schema.md, version 16).
enum class DeviceWorkKind { kKernel, kMemcpy, kMemset };
std::string_view device_work_category(DeviceWorkKind k);  // "kernel" | "gpu_memcpy" | "gpu_memset"

struct DeviceWorkRecord {
  int op = -1;                    // index of the OpRecord of the op that launched it
  int name = 0;                   // index into DeviceTrace::names
  DeviceWorkKind kind = DeviceWorkKind::kKernel;
  std::uint32_t device = 0;       // CUDA device
  std::uint32_t stream = 0;       // CUDA stream id (CUPTI's)
  std::uint32_t correlation_id = 0;  // of the API call that launched it
  std::int64_t start_ns = 0;      // device time, ns since the tracer's origin
  std::int64_t dur_ns = 0;
  std::int64_t bytes = 0;         // copied or set; 0 for kernels
};

// The device work of one traced repetition, in start order, with its names stored once each:
// kernel names come from CUPTI's records and must outlive them, while OpRecord keeps its string
// literal (the CPU path allocates nothing per op).
struct DeviceTrace {
  std::vector<std::string> names;
  std::vector<DeviceWorkRecord> records;
  // Device work of a replayed graph whose node no op was recorded for at capture (a stale
  // graph's node, or a clone CUPTI did not report): counted here, never given to an op.
  int unmatched_graph_nodes = 0;
  // The NVTX ranges the timer saw recorded against those the records pushed, in one line
  // (nvtx_check.h); "" when the timer saw no NVTX marker.
  std::string nvtx_check;
};

// Times ops for a Tracer. start/stop are called in pairs per slot and must not synchronise;
// resolve() is called after the backend's synchronisation and returns each slot's interval:
// after each step, or only once the traced repetition is over when resolves_at_end() (a timer
// that reads everything back at once, so that nothing is read back between steps).
class OpTimer {
 public:
  virtual ~OpTimer() = default;
  virtual bool resolves_at_end() const { return false; }
  // Called before start(slot) when the slot is a range (a step or a layer), not an op.
  virtual void mark_range(int /*slot*/) {}
  virtual void start(int slot) = 0;
  virtual void stop(int slot) = 0;
  // The slot's start and duration in ns since `origin`.
  virtual void resolve(int slot, std::chrono::steady_clock::time_point origin,
                       std::int64_t& start_ns, std::int64_t& dur_ns) = 0;
  // After every slot was resolved, for a timer that resolves at the end: the kernels, copies
  // and sets the device ran for each slot (DeviceWorkRecord::op = the slot), on the clock of
  // resolve(). Nothing for a timer that does not see them.
  virtual void device_work(std::chrono::steady_clock::time_point /*origin*/, DeviceTrace& /*out*/) {}
  // After device_work(): the NVTX ranges the timer saw recorded, checked against `records`
  // (nvtx_check.h: NvtxCheck::summary); "" when it saw none.
  virtual std::string check_nvtx(const std::vector<OpRecord>& /*records*/) { return ""; }
  // True when graph_launch() gives a replayed graph's device work to the ops recorded at its
  // capture (the CUPTI timer); a Session replays traced decode steps from graphs only then.
  virtual bool sees_graph_nodes() const { return false; }
  // Slots [first, first + ops->ops.size()) were just opened and closed for a captured graph's
  // ops, inside `launch_slot` (the innermost open scope); `launch` enqueues the graph. A timer
  // that sees graph nodes attributes the replay's device work to those slots by its node.
  virtual void graph_launch(int /*launch_slot*/, int /*first*/,
                            std::shared_ptr<const GraphOps> /*ops*/,
                            const std::function<void()>& launch) {
    launch();
  }
};

// steady_clock at start and stop, nothing else. On the CPU backend ops run synchronously, so
// this is exact (--timer device and host-nosync alike). On the CUDA backend it is --timer
// host-nosync: ops return once enqueued, so it measures enqueue time (wrong on purpose).
class HostOpTimer final : public OpTimer {
 public:
  void start(int slot) override;
  void stop(int slot) override;
  void resolve(int slot, std::chrono::steady_clock::time_point origin, std::int64_t& start_ns,
               std::int64_t& dur_ns) override;

 private:
  std::vector<std::chrono::steady_clock::time_point> starts_, stops_;
};

// Collects the records of one traced repetition.
class Tracer {
 public:
  Tracer(TraceLevel level, std::unique_ptr<OpTimer> timer,
         std::chrono::steady_clock::time_point origin);

  TraceLevel level() const { return level_; }
  // Every record begun from now on belongs to this phase and step.
  void set_phase(Phase phase, int step) {
    phase_ = phase;
    step_ = step;
  }
  // Starts a record (nested in the innermost open one); returns its index.
  int begin(const char* name, OpCategory category, int layer, std::int64_t flops,
            std::int64_t bytes);
  void end(int index);
  // After the step's synchronisation: fills start/dur of every record not yet resolved
  // (nothing, for a timer that resolves at the end).
  void resolve();
  // After the traced repetition's last synchronisation: resolves every record, whatever the
  // timer. records() is complete after this.
  void finish();
  const std::vector<OpRecord>& records() const { return records_; }
  // The device work of the records (DeviceWorkRecord::op indexes records()), complete after
  // finish(); empty unless the timer sees each kernel (the CUPTI timer).
  const DeviceTrace& device_trace() const { return device_; }
  // True when only finish() resolves the records (the timer reads everything back at once).
  bool resolves_at_end() const { return timer_->resolves_at_end(); }
  // While a traced step is captured into a graph (into a Tracer of its own: cuda_graph.h), the
  // recorder is told of every scope change and so learns each node's op; nullptr stops it.
  void set_graph_recorder(GraphOpRecorder* recorder) { recorder_ = recorder; }
  // Whether its OpScopes push NVTX ranges (default true). A graph capture's own Tracer does not:
  // the step's Tracer records the captured ops when the graph is launched, and the ranges
  // pushed are those its records say (nvtx_check.h).
  void set_pushes_nvtx(bool on) { pushes_nvtx_ = on; }
  bool pushes_nvtx() const { return pushes_nvtx_; }
  // Whether graph_launch() attributes a replay's kernels to its ops (OpTimer::sees_graph_nodes).
  bool sees_graph_nodes() const { return timer_->sees_graph_nodes(); }
  // A captured graph replayed inside the innermost open scope at context length `length`:
  // records its ops there, in this phase and step, nested as they were at capture (enqueued
  // now, their analytic work at `length`: GraphOps::flops_at), then `launch` enqueues the graph
  // through the timer, which gives each kernel of the replay to its op.
  void graph_launch(std::shared_ptr<const GraphOps> ops, int length,
                    const std::function<void()>& launch);
  // Moves out every record, resolved, and starts again from none, the timer's slots reused
  // from 0: a long-running server (serve --trace) drains its tracer after each step. Outside
  // any scope, and for a timer that resolves per step only (Error otherwise: a timer that
  // resolves at the end needs a new Tracer per window instead).
  std::vector<OpRecord> take_records();

 private:
  TraceLevel level_;
  std::unique_ptr<OpTimer> timer_;
  std::chrono::steady_clock::time_point origin_;
  Phase phase_ = Phase::kPrefill;
  int step_ = 0;
  std::vector<OpRecord> records_;
  DeviceTrace device_;
  std::vector<int> open_;      // indices of records begun and not ended
  std::size_t resolved_ = 0;   // records before this index are resolved
  GraphOpRecorder* recorder_ = nullptr;
  bool pushes_nvtx_ = true;
};

// The scope of one op or range. Records into `tracer` when it is non-null and its level asks
// for this kind (ranges named "prefill"/"decode_step" at steps and ops; everything else at
// ops only); pushes the NVTX range when NVTX is compiled in, unless `tracer` is a graph
// capture's (Tracer::pushes_nvtx).
class OpScope {
 public:
  OpScope(Tracer* tracer, const char* name, OpCategory category, int layer = -1,
          std::int64_t flops = 0, std::int64_t bytes = 0, bool step_range = false);
  ~OpScope();
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

 private:
  Tracer* tracer_ = nullptr;
  int index_ = -1;
  bool nvtx_ = false;  // pushed an NVTX range
};

}  // namespace llmbench
