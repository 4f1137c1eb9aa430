// The CUPTI op timer (see cupti_timer.h): CUPTI's buffer callbacks over a pool of recycled
// buffers (activity_buffer_pool.h), the records read from them on the pool's consumer thread,
// and the OpTimer that pushes one external correlation id per op and gives each op its kernels.
// A replayed CUDA graph's kernels go to the ops recorded at its capture by their graph node
// (graph_ops.h); CUPTI names them by the instantiated graph's node copies, whose originals a
// resource callback (CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) reports while instantiating.
#include "engine/model/cupti_timer.h"

#include <cupti.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "engine/model/activity_attribution.h"
#include "engine/model/activity_buffer_pool.h"
#include "engine/model/nvtx_check.h"
#include "kernels/common/error.h"

namespace llmbench {

namespace {

void cupti_check(CUptiResult rc, const char* what) {
  if (rc == CUPTI_SUCCESS) return;
  const char* text = nullptr;
  if (cuptiGetResultString(rc, &text) != CUPTI_SUCCESS || text == nullptr) text = "unknown";
  throw Error(std::string("--timer cupti: ") + what + " failed: " + text);
}

// Activity buffers: a pool of 8 buffers of 8 MiB, allocated, zeroed and touched once, when the
// first CUPTI timer starts, and recycled (activity_buffer_pool.h). On an H200 (2026-11-26) a
// llama2-7b batch-1 decode step filled one 8 MiB buffer every ~33 steps, and each hand-over
// stalled the launching thread up to ~4 ms while the buffer was allocated on request, zeroed by
// CUPTI on that thread (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER at its default) and
// parsed inside the completion callback under a lock. Now the request takes a pre-zeroed buffer
// without a lock, CUPTI is told the buffers come zeroed, and the completion only queues the
// buffer for the pool's consumer thread, which parses, zeroes and frees it again: the launching
// thread never allocates, zeroes, parses or waits. A buffer is back in the pool within
// milliseconds of its hand-over, so 8 (64 MiB) leave a wide margin at one hand-over per ~0.2 s;
// when none is free CUPTI drops records, and the repetition is refused saying so (collect()).
// No periodic flush (cuptiActivityFlushPeriod): each flush would hand over a part-filled buffer
// and make the launching thread ask for a new one sooner. One forced flush when the traced
// repetition is over delivers the rest. (A pool of 4 pre-faulted 32 MiB buffers, still zeroed
// by CUPTI and parsed in the callback, measured worse on the H200: docs/gpu-validation.md,
// third call.)
constexpr std::size_t kBufferBytes = std::size_t{8} << 20;
constexpr std::size_t kPoolBuffers = 8;

// memcpy_name() (activity_attribution.h) takes CUPTI's copy kinds by number.
static_assert(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD == 1 && CUPTI_ACTIVITY_MEMCPY_KIND_DTOH == 2 &&
              CUPTI_ACTIVITY_MEMCPY_KIND_DTOD == 8 && CUPTI_ACTIVITY_MEMCPY_KIND_HTOH == 9 &&
              CUPTI_ACTIVITY_MEMCPY_KIND_PTOP == 10);

// What CUPTI delivered, process-wide: CUPTI has one pair of buffer callbacks per process.
// Filled in by the pool's consumer thread; read by the timer after the pool is drained.
struct Delivered {
  std::mutex mu;
  std::vector<DeviceActivity> activities;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> correlations;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> clones;  // (original, clone) node ids
  std::vector<NvtxMarker> markers;  // NVTX push/pop ranges (only with NVTX_INJECTION64_PATH)
  KernelNames names;
  std::atomic<std::size_t> dropped{0};  // added to by the completion callback
};

Delivered& delivered() {
  static Delivered d;
  return d;
}

// Kernel, memcpy and memset records share the fields read here.
template <class Record>
DeviceActivity interval_of(const CUpti_Activity* rec, DeviceWorkKind kind) {
  const auto* r = reinterpret_cast<const Record*>(rec);
  DeviceActivity a;
  a.correlation_id = r->correlationId;
  a.start_ns = std::int64_t(r->start);
  a.end_ns = std::int64_t(r->end);
  a.kind = kind;
  a.device = r->deviceId;
  a.stream = r->streamId;
  a.graph_node = r->graphNodeId;
  return a;
}

void read_record(const CUpti_Activity* rec, Delivered& d) {
  switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      DeviceActivity a = interval_of<CUpti_ActivityKernel10>(rec, DeviceWorkKind::kKernel);
      a.name = d.names.intern(reinterpret_cast<const CUpti_ActivityKernel10*>(rec)->name);
      d.activities.push_back(a);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec);
      DeviceActivity a = interval_of<CUpti_ActivityMemcpy6>(rec, DeviceWorkKind::kMemcpy);
      a.name = d.names.intern(memcpy_name(m->copyKind));
      a.bytes = std::int64_t(m->bytes);
      d.activities.push_back(a);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      DeviceActivity a = interval_of<CUpti_ActivityMemset4>(rec, DeviceWorkKind::kMemset);
      a.name = d.names.intern("Memset");
      a.bytes = std::int64_t(reinterpret_cast<const CUpti_ActivityMemset4*>(rec)->bytes);
      d.activities.push_back(a);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MARKER: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMarker2*>(rec);
      const bool start = (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) != 0;
      if (!start && (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) == 0) break;  // instantaneous
      NvtxMarker k;
      k.id = m->id;
      k.start = start;
      k.ts_ns = std::int64_t(m->timestamp);
      if (start && m->name != nullptr) k.name = m->name;
      k.in_domain = m->domain != nullptr && std::strcmp(m->domain, "llmbench") == 0;
      if (start && !k.in_domain) break;  // another domain's range
      d.markers.push_back(std::move(k));
      break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      const auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(rec);
      if (e->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
        d.correlations.emplace_back(e->correlationId, e->externalId);
      break;
    }
    default:  // the driver and runtime API records that carry the correlation ids
      break;
  }
}

// On the pool's consumer thread: every record of one filled buffer.
void parse_buffer(std::uint8_t* buffer, std::size_t valid_bytes) {
  Delivered& d = delivered();
  std::lock_guard<std::mutex> lock(d.mu);
  CUpti_Activity* rec = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_bytes, &rec) == CUPTI_SUCCESS)
    read_record(rec, d);
}

// The resource callback of the timer's subscriber: a node of a graph being instantiated was
// copied into the executable graph, whose replays CUPTI reports by the copy's id.
void CUPTIAPI node_cloned(void*, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                          const void* data) {
  if (domain != CUPTI_CB_DOMAIN_RESOURCE || id != CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) return;
  const auto* g = static_cast<const CUpti_GraphData*>(
      static_cast<const CUpti_ResourceData*>(data)->resourceDescriptor);
  std::uint64_t original = 0, clone = 0;
  if (cuptiGetGraphNodeId(g->originalNode, &original) != CUPTI_SUCCESS ||
      cuptiGetGraphNodeId(g->node, &clone) != CUPTI_SUCCESS)
    return;  // its replays' kernels count as unmatched
  Delivered& d = delivered();
  std::lock_guard<std::mutex> lock(d.mu);
  d.clones.emplace_back(original, clone);
}

// Made by the first timer and never destroyed: CUPTI may hand buffers back as the process ends,
// after static destructors would have run.
ActivityBufferPool* g_pool = nullptr;

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size,
                               std::size_t* max_records) {
  *size = 0;
  *buffer = g_pool != nullptr ? g_pool->request(*size) : nullptr;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext ctx, std::uint32_t stream_id, std::uint8_t* buffer,
                               std::size_t, std::size_t valid_bytes) {
  std::size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS && dropped > 0)
    delivered().dropped += dropped;
  if (g_pool != nullptr) g_pool->complete(buffer, valid_bytes);
}

// The activity kinds a timer turns on: the device work, and the API records (runtime and
// driver: cuBLAS launches through either) that the external correlation records refer to.
constexpr CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET,            CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_DRIVER,            CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};

std::mutex& timers_mu() {
  static std::mutex mu;
  return mu;
}
std::uint64_t g_next_base = 1;  // external ids of successive timers never overlap
bool g_callbacks_registered = false;
bool g_timer_alive = false;

class CuptiOpTimer final : public OpTimer {
 public:
  CuptiOpTimer() {
    std::lock_guard<std::mutex> lock(timers_mu());
    if (g_timer_alive) throw Error("--timer cupti: one CUPTI-timed repetition at a time");
    if (!g_callbacks_registered) {
      if (g_pool == nullptr) g_pool = new ActivityBufferPool(kBufferBytes, kPoolBuffers, parse_buffer);
      // The pool's buffers come zeroed: CUPTI need not zero them on the launching thread. A
      // CUPTI that refuses the attribute zeroes them itself, as before the pool: slower at
      // each hand-over, still correct, so that is not an error.
      std::uint8_t zeroed = 1;
      std::size_t zeroed_size = sizeof(zeroed);
      cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &zeroed_size,
                                &zeroed);
      cupti_check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed),
                  "cuptiActivityRegisterCallbacks");
      g_callbacks_registered = true;
    }
    for (std::size_t i = 0; i < std::size(kKinds); ++i) {
      const CUptiResult rc = cuptiActivityEnable(kKinds[i]);
      if (rc != CUPTI_SUCCESS) {
        for (std::size_t j = 0; j < i; ++j) cuptiActivityDisable(kKinds[j]);
        cupti_check(rc, "cuptiActivityEnable");
      }
    }
    // NVTX ranges, for check_nvtx: recorded only when NVTX_INJECTION64_PATH names libcupti; a
    // CUPTI that refuses the kind leaves the check out, not the timer.
    markers_enabled_ = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MARKER) == CUPTI_SUCCESS;
    g_timer_alive = true;
    exhausted_before_ = g_pool->stats().exhausted;
    failures_before_ = g_pool->stats().consume_failures;
    base_ = g_next_base;
    std::uint64_t now = 0;
    cupti_check(cuptiGetTimestamp(&now), "cuptiGetTimestamp");
    anchor_device_ns_ = std::int64_t(now);
    anchor_host_ = std::chrono::steady_clock::now();
    attribution_.set_external_base(base_);
    // Graph nodes: without the callback (another CUPTI client holds the one subscriber, e.g.
    // Nsight), sees_graph_nodes() is false and traced decode steps run eagerly.
    CUpti_SubscriberHandle sub = nullptr;
    if (cuptiSubscribe(&sub, node_cloned, nullptr) == CUPTI_SUCCESS) {
      if (cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE,
                              CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) == CUPTI_SUCCESS)
        subscriber_ = sub;
      else
        cuptiUnsubscribe(sub);
    }
  }

  ~CuptiOpTimer() override {
    std::lock_guard<std::mutex> lock(timers_mu());
    if (subscriber_ != nullptr) cuptiUnsubscribe(subscriber_);
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    for (CUpti_ActivityKind k : kKinds) cuptiActivityDisable(k);
    if (markers_enabled_) cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MARKER);
    g_next_base = base_ + std::uint64_t(host_start_.size()) + 1;
    g_timer_alive = false;
    g_pool->drain();
    Delivered& d = delivered();
    std::lock_guard<std::mutex> dl(d.mu);
    d.activities.clear();
    d.correlations.clear();
    d.clones.clear();
    d.markers.clear();
    d.names = KernelNames{};
    d.dropped = 0;
  }

  bool resolves_at_end() const override { return true; }

  void device_work(std::chrono::steady_clock::time_point origin, DeviceTrace& out) override {
    if (times_.size() != host_start_.size()) collect();
    using std::chrono::duration_cast;
    using std::chrono::nanoseconds;
    out.names = names_;
    out.records = attribution_.device_work(
        -anchor_device_ns_ + duration_cast<nanoseconds>(anchor_host_ - origin).count());
    out.unmatched_graph_nodes = attribution_.unmatched_graph_nodes();
  }

  std::string check_nvtx(const std::vector<OpRecord>& records) override {
    if (markers_.empty()) return "";
    return llmbench::check_nvtx(records, markers_).summary();
  }

  bool sees_graph_nodes() const override { return subscriber_ != nullptr; }

  void graph_launch(int launch_slot, int first, std::shared_ptr<const GraphOps> ops,
                    const std::function<void()>& launch) override {
    attribution_.add_graph_launch(launch_slot, first, std::move(ops));
    launch();  // inside launch_slot's scope: its external id is the one pushed
  }

  void mark_range(int slot) override { next_range_ = slot; }

  void start(int slot) override {
    attribution_.add_slot(slot, open_.empty() ? -1 : open_.back(), next_range_ == slot);
    open_.push_back(slot);
    host_start_.push_back(std::chrono::steady_clock::now());
    host_stop_.push_back(host_start_.back());
    cupti_check(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
                                                       base_ + std::uint64_t(slot)),
                "cuptiActivityPushExternalCorrelationId");
  }

  void stop(int slot) override {
    std::uint64_t id = 0;
    cupti_check(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &id),
                "cuptiActivityPopExternalCorrelationId");
    LLMBENCH_CHECK(id == base_ + std::uint64_t(slot) && !open_.empty() && open_.back() == slot,
                   "cupti timer scopes must nest");
    open_.pop_back();
    host_stop_[std::size_t(slot)] = std::chrono::steady_clock::now();
  }

  void resolve(int slot, std::chrono::steady_clock::time_point origin, std::int64_t& start_ns,
               std::int64_t& dur_ns) override {
    if (times_.size() != host_start_.size()) collect();
    using std::chrono::duration_cast;
    using std::chrono::nanoseconds;
    std::int64_t device_start = 0, device_dur = 0;
    if (ActivityAttribution::interval(times_[std::size_t(slot)], device_start, device_dur)) {
      start_ns = device_start - anchor_device_ns_ +
                 duration_cast<nanoseconds>(anchor_host_ - origin).count();
      dur_ns = device_dur;
      return;
    }
    // Nothing ran on the device for it (host bookkeeping): its host interval.
    start_ns = duration_cast<nanoseconds>(host_start_[std::size_t(slot)] - origin).count();
    dur_ns = duration_cast<nanoseconds>(host_stop_[std::size_t(slot)] -
                                        host_start_[std::size_t(slot)]).count();
  }

 private:
  // After the caller's synchronisation: every record delivered and parsed, then attributed.
  void collect() {
    cupti_check(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
    g_pool->drain();
    const ActivityBufferStats pool = g_pool->stats();
    Delivered& d = delivered();
    std::lock_guard<std::mutex> lock(d.mu);
    if (d.dropped > 0 || pool.exhausted > exhausted_before_ ||
        pool.consume_failures > failures_before_)
      throw Error("--timer cupti: CUPTI dropped " + std::to_string(d.dropped) +
                  " activity records (its buffer requests found the pool of " +
                  std::to_string(pool.buffers) + " x " +
                  std::to_string(pool.buffer_bytes >> 20) + " MiB empty " +
                  std::to_string(pool.exhausted - exhausted_before_) + " times, at most " +
                  std::to_string(pool.max_in_use) + " out at once; " +
                  std::to_string(pool.consume_failures - failures_before_) +
                  " buffers failed to parse); op times would be incomplete");
    for (const auto& [corr, ext] : d.correlations) attribution_.add_correlation(corr, ext);
    for (const auto& [original, clone] : d.clones) attribution_.add_node_clone(original, clone);
    d.clones.clear();
    markers_ = std::move(d.markers);
    d.markers.clear();
    for (const DeviceActivity& a : d.activities) attribution_.add_activity(a);
    d.correlations.clear();
    d.activities.clear();
    names_ = d.names.names();
    times_ = attribution_.resolve();
  }

  std::uint64_t base_ = 0;
  std::int64_t anchor_device_ns_ = 0;
  std::chrono::steady_clock::time_point anchor_host_;
  ActivityAttribution attribution_;
  std::vector<int> open_;
  int next_range_ = -1;  // the slot mark_range() named, until its start()
  std::vector<std::chrono::steady_clock::time_point> host_start_, host_stop_;
  std::vector<SlotDeviceTime> times_;
  std::vector<std::string> names_;  // of the device work, DeviceActivity::name indexes it
  std::uint64_t exhausted_before_ = 0, failures_before_ = 0;  // the pool's counts at the start
  CUpti_SubscriberHandle subscriber_ = nullptr;  // the graph-node clone callback's
  std::vector<NvtxMarker> markers_;  // what CUPTI recorded of NVTX ranges (collect())
  bool markers_enabled_ = false;
};

}  // namespace

std::unique_ptr<OpTimer> make_cupti_timer() { return std::make_unique<CuptiOpTimer>(); }

}  // namespace llmbench
