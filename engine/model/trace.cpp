// Tracer, host timer and OpScope (see trace.h).
#include "engine/model/trace.h"

#include "engine/model/graph_ops.h"
#include "kernels/common/error.h"

#if defined(LLMBENCH_HAVE_NVTX)
#include <nvtx3/nvToolsExt.h>
#endif

namespace llmbench {

std::string_view trace_level_name(TraceLevel level) {
  switch (level) {
    case TraceLevel::kOff: return "off";
    case TraceLevel::kSteps: return "steps";
    case TraceLevel::kOps: return "ops";
  }
  return "?";
}

std::optional<TraceLevel> parse_trace_level(std::string_view s) {
  if (s == "off") return TraceLevel::kOff;
  if (s == "steps") return TraceLevel::kSteps;
  if (s == "ops") return TraceLevel::kOps;
  return std::nullopt;
}

std::string_view category_name(OpCategory c) {
  switch (c) {
    case OpCategory::kRange: return "range";
    case OpCategory::kGemm: return "gemm";
    case OpCategory::kAttention: return "attention";
    case OpCategory::kNorm: return "norm";
    case OpCategory::kElementwise: return "elementwise";
    case OpCategory::kCopy: return "copy";
    case OpCategory::kTransfer: return "transfer";
    case OpCategory::kSample: return "sample";
  }
  return "?";
}

std::string_view device_work_category(DeviceWorkKind k) {
  switch (k) {
    case DeviceWorkKind::kKernel: return "kernel";
    case DeviceWorkKind::kMemcpy: return "gpu_memcpy";
    case DeviceWorkKind::kMemset: return "gpu_memset";
  }
  return "?";
}

std::string_view phase_name(Phase p) { return p == Phase::kPrefill ? "prefill" : "decode"; }

std::string_view timer_mode_name(TimerMode m) {
  switch (m) {
    case TimerMode::kDevice: return "device";
    case TimerMode::kHostNoSync: return "host-nosync";
    case TimerMode::kCupti: return "cupti";
    case TimerMode::kEvents: return "events";
  }
  return "?";
}

std::optional<TimerMode> parse_timer_mode(std::string_view s) {
  if (s == "device") return TimerMode::kDevice;
  if (s == "host-nosync") return TimerMode::kHostNoSync;
  if (s == "cupti") return TimerMode::kCupti;
  if (s == "events") return TimerMode::kEvents;
  return std::nullopt;
}

// ---- HostOpTimer ----

void HostOpTimer::start(int slot) {
  if (std::size_t(slot) >= starts_.size()) {
    starts_.resize(std::size_t(slot) + 1);
    stops_.resize(std::size_t(slot) + 1);
  }
  starts_[slot] = std::chrono::steady_clock::now();
}

void HostOpTimer::stop(int slot) { stops_[slot] = std::chrono::steady_clock::now(); }

void HostOpTimer::resolve(int slot, std::chrono::steady_clock::time_point origin,
                          std::int64_t& start_ns, std::int64_t& dur_ns) {
  using std::chrono::duration_cast;
  using std::chrono::nanoseconds;
  start_ns = duration_cast<nanoseconds>(starts_[slot] - origin).count();
  dur_ns = duration_cast<nanoseconds>(stops_[slot] - starts_[slot]).count();
}

// ---- Tracer ----

Tracer::Tracer(TraceLevel level, std::unique_ptr<OpTimer> timer,
               std::chrono::steady_clock::time_point origin)
    : level_(level), timer_(std::move(timer)), origin_(origin) {}

int Tracer::begin(const char* name, OpCategory category, int layer, std::int64_t flops,
                  std::int64_t bytes) {
  OpRecord r;
  r.name = name;
  r.category = category;
  r.layer = layer;
  r.phase = phase_;
  r.step = step_;
  r.depth = int(open_.size());
  r.parent = open_.empty() ? -1 : open_.back();
  r.flops = flops;
  r.bytes = bytes;
  r.enqueue_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                     std::chrono::steady_clock::now() - origin_).count();
  if (recorder_) recorder_->mark(open_.empty() ? -1 : open_.back());
  const int index = int(records_.size());
  records_.push_back(r);
  open_.push_back(index);
  if (category == OpCategory::kRange) timer_->mark_range(index);
  timer_->start(index);
  return index;
}

void Tracer::end(int index) {
  LLMBENCH_CHECK(!open_.empty() && open_.back() == index, "trace scopes must nest");
  if (recorder_) recorder_->mark(index);
  timer_->stop(index);
  open_.pop_back();
}

void Tracer::graph_launch(std::shared_ptr<const GraphOps> ops, int length,
                          const std::function<void()>& launch) {
  LLMBENCH_CHECK(!open_.empty(), "a graph is replayed inside an open scope");
  const std::size_t base = open_.size();
  const int launch_slot = open_.back(), first = int(records_.size());
  // Each op opened after closing what is not its ancestor, as its scope nested at capture.
  for (std::size_t i = 0; i < ops->ops.size(); ++i) {
    const OpRecord& op = ops->ops[i];
    const int parent = op.parent < 0 ? launch_slot : first + op.parent;
    while (open_.size() > base && open_.back() != parent) end(open_.back());
    begin(op.name, op.category, op.layer, ops->flops_at(i, length), ops->bytes_at(i, length));
    records_.back().replayed = true;
  }
  while (open_.size() > base) end(open_.back());
  timer_->graph_launch(launch_slot, first, std::move(ops), launch);
}

void Tracer::resolve() {
  if (!timer_->resolves_at_end()) finish();
}

void Tracer::finish() {
  LLMBENCH_CHECK(open_.empty(), "resolve() inside an open scope");
  for (; resolved_ < records_.size(); ++resolved_) {
    OpRecord& r = records_[resolved_];
    timer_->resolve(int(resolved_), origin_, r.start_ns, r.dur_ns);
  }
  if (timer_->resolves_at_end()) {
    device_ = DeviceTrace{};
    timer_->device_work(origin_, device_);
    // At --trace steps every op still pushes its range but only the steps are records.
    if (level_ == TraceLevel::kOps) device_.nvtx_check = timer_->check_nvtx(records_);
  }
}

std::vector<OpRecord> Tracer::take_records() {
  LLMBENCH_CHECK(!timer_->resolves_at_end(), "take_records() needs a timer that resolves per step");
  finish();
  std::vector<OpRecord> out;
  out.swap(records_);
  resolved_ = 0;
  return out;
}

// ---- OpScope ----

namespace {

#if defined(LLMBENCH_HAVE_NVTX)
nvtxDomainHandle_t nvtx_domain() {
  static nvtxDomainHandle_t domain = nvtxDomainCreateA("llmbench");
  return domain;
}
#endif

}  // namespace

OpScope::OpScope(Tracer* tracer, const char* name, OpCategory category, int layer,
                 std::int64_t flops, std::int64_t bytes, bool step_range) {
#if defined(LLMBENCH_HAVE_NVTX)
  if (!tracer || tracer->pushes_nvtx()) {
    nvtxEventAttributes_t attr{};
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attr.message.ascii = name;
    attr.payloadType = NVTX_PAYLOAD_TYPE_INT32;
    attr.payload.iValue = layer;
    nvtxDomainRangePushEx(nvtx_domain(), &attr);
    nvtx_ = true;
  }
#endif
  if (tracer && (tracer->level() == TraceLevel::kOps ||
                 (tracer->level() == TraceLevel::kSteps && step_range))) {
    tracer_ = tracer;
    index_ = tracer->begin(name, category, layer, flops, bytes);
  }
}

OpScope::~OpScope() {
  if (tracer_) tracer_->end(index_);
#if defined(LLMBENCH_HAVE_NVTX)
  if (nvtx_) nvtxDomainRangePop(nvtx_domain());
#endif
}

}  // namespace llmbench
