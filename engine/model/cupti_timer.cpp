// The CUPTI op timer (see cupti_timer.h): CUPTI's buffer callbacks, the records read from them,
// and the OpTimer that pushes one external correlation id per op.
#include "engine/model/cupti_timer.h"

#include <cupti.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "engine/model/activity_attribution.h"
#include "kernels/common/error.h"

namespace llmbench {

namespace {

void cupti_check(CUptiResult rc, const char* what) {
  if (rc == CUPTI_SUCCESS) return;
  const char* text = nullptr;
  if (cuptiGetResultString(rc, &text) != CUPTI_SUCCESS || text == nullptr) text = "unknown";
  throw Error(std::string("--timer cupti: ") + what + " failed: " + text);
}

// Activity buffers of 8 MiB, allocated when CUPTI asks. On an H200 (2026-11-26) a llama2-7b
// batch-1 decode step stalled ~4 ms at each buffer hand-over (one every ~33 steps); a pool of
// pre-faulted 32 MiB buffers with a warm-up repetition measured worse overall in the same
// setting (docs/gpu-validation.md, third call), so the plain version stays.
constexpr std::size_t kBufferBytes = std::size_t{8} << 20;
constexpr std::size_t kBufferAlign = 8;  // CUPTI's required alignment of activity buffers

// What CUPTI delivered, process-wide: CUPTI has one pair of buffer callbacks per process. The
// completion callback runs on CUPTI's own thread, hence the mutex.
struct Delivered {
  std::mutex mu;
  std::vector<DeviceActivity> activities;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> correlations;
  std::size_t dropped = 0;
};

Delivered& delivered() {
  static Delivered d;
  return d;
}

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size,
                               std::size_t* max_records) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(kBufferAlign, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;
}

// Kernel, memcpy and memset records share the three fields read here.
template <class Record>
void add_interval(const CUpti_Activity* rec, Delivered& d) {
  const auto* r = reinterpret_cast<const Record*>(rec);
  d.activities.push_back({r->correlationId, std::int64_t(r->start), std::int64_t(r->end)});
}

void read_record(const CUpti_Activity* rec, Delivered& d) {
  switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      add_interval<CUpti_ActivityKernel10>(rec, d);
      break;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      add_interval<CUpti_ActivityMemcpy6>(rec, d);
      break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
      add_interval<CUpti_ActivityMemset4>(rec, d);
      break;
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

void CUPTIAPI buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t,
                               std::size_t valid_bytes) {
  Delivered& d = delivered();
  {
    std::lock_guard<std::mutex> lock(d.mu);
    CUpti_Activity* rec = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid_bytes, &rec) == CUPTI_SUCCESS)
      read_record(rec, d);
    std::size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS)
      d.dropped += dropped;
  }
  std::free(buffer);
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
    g_timer_alive = true;
    base_ = g_next_base;
    std::uint64_t now = 0;
    cupti_check(cuptiGetTimestamp(&now), "cuptiGetTimestamp");
    anchor_device_ns_ = std::int64_t(now);
    anchor_host_ = std::chrono::steady_clock::now();
    attribution_.set_external_base(base_);
  }

  ~CuptiOpTimer() override {
    std::lock_guard<std::mutex> lock(timers_mu());
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    for (CUpti_ActivityKind k : kKinds) cuptiActivityDisable(k);
    g_next_base = base_ + std::uint64_t(host_start_.size()) + 1;
    g_timer_alive = false;
    Delivered& d = delivered();
    std::lock_guard<std::mutex> dl(d.mu);
    d.activities.clear();
    d.correlations.clear();
    d.dropped = 0;
  }

  bool resolves_at_end() const override { return true; }

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
  // After the caller's synchronisation: every record delivered, then attributed.
  void collect() {
    cupti_check(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
    Delivered& d = delivered();
    std::lock_guard<std::mutex> lock(d.mu);
    if (d.dropped > 0)
      throw Error("--timer cupti: CUPTI dropped " + std::to_string(d.dropped) +
                  " activity records; op times would be incomplete");
    for (const auto& [corr, ext] : d.correlations) attribution_.add_correlation(corr, ext);
    for (const DeviceActivity& a : d.activities) attribution_.add_activity(a);
    d.correlations.clear();
    d.activities.clear();
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
};

}  // namespace

std::unique_ptr<OpTimer> make_cupti_timer() { return std::make_unique<CuptiOpTimer>(); }

}  // namespace llmbench
