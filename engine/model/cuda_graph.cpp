// StepGraphs (see cuda_graph.h): warm-up, capture, replay and the fallback, per step shape.
#include "engine/model/cuda_graph.h"

#include <chrono>
#include <exception>
#include <utility>

#include "engine/model/graph_ops.h"
#include "engine/model/trace.h"
#include "kernels/common/error.h"

namespace llmbench {

StepGraphs::StepGraphs(GraphDriver& driver, std::string what)
    : driver_(driver), what_(std::move(what)) {}

StepGraphs::~StepGraphs() = default;

std::size_t StepGraphs::graphs() const {
  std::size_t n = 0;
  for (const auto& [shape, e] : entries_) n += e.exec ? 1 : 0;
  return n;
}

bool StepGraphs::capture(Entry& e, const StepShape& shape,
                         const std::function<void(Tracer*)>& launch, Tracer* tracer,
                         int length) {
  std::string why;
  bool capturing = false;
  try {
    driver_.begin_capture();
    capturing = true;
    if (tracer) {
      // The capture's scopes go to a Tracer of its own (host-timed, never stored): its records
      // are the graph's ops, and the step's Tracer gets them at each launch.
      Tracer scratch(tracer->level(), std::make_unique<HostOpTimer>(),
                     std::chrono::steady_clock::now());
      GraphOpRecorder recorder([this] { return driver_.new_nodes(); });
      scratch.set_graph_recorder(&recorder);
      scratch.set_pushes_nvtx(false);
      launch(&scratch);
      auto ops = std::make_shared<GraphOps>(recorder.finish(scratch.records()));
      ops->length = length;
      learn_work_per_position(*ops, e.warm_ops, e.warm_length);
      e.ops = std::move(ops);
    } else {
      launch(nullptr);
    }
    capturing = false;  // end_capture ends it whether it throws or not
    e.exec = driver_.end_capture();
    if (!e.exec) throw Error("instantiation returned no graph");
    return true;
  } catch (const std::exception& ex) {
    why = ex.what();
  } catch (...) {
    why = "unknown exception";
  }
  if (capturing) driver_.abort_capture();
  e.exec.reset();
  e.ops.reset();
  failed_ = true;
  note_ = "cuda graphs: capturing the " + what_ + " (batch " + std::to_string(shape.batch) +
          ", " + std::to_string(shape.n_new) + " new token" + (shape.n_new == 1 ? "" : "s") +
          ") failed (" + why + "); every " + what_ + " runs eagerly";
  return false;
}

void StepGraphs::launch_graph(Entry& e, Tracer* tracer, int length) {
  if (!tracer) {
    driver_.launch(*e.exec);
    return;
  }
  tracer->graph_launch(e.ops, length, [&] { driver_.launch(*e.exec); });
  ++traced_launches_;
}

StepRun StepGraphs::run(const StepShape& shape, const std::function<void()>& launch) {
  return run(shape, [&](Tracer*) { launch(); }, nullptr);
}

StepRun StepGraphs::run(const StepShape& shape, const std::function<void(Tracer*)>& launch_in,
                        Tracer* tracer, int length) {
  const auto launch = [&] { launch_in(tracer); };
  if (failed_) {
    launch();
    ++eager_;
    return StepRun::kEager;
  }
  Entry& e = entries_[{shape, tracer != nullptr}];
  const std::uint64_t epoch = driver_.buffer_epoch();
  if (e.warmed && e.epoch != epoch) {  // a buffer the graph may point into moved: start over
    e.exec.reset();
    e.ops.reset();
    e.warmed = false;
  }
  if (e.exec) {
    launch_graph(e, tracer, length);
    ++replays_;
    return StepRun::kReplayed;
  }
  if (!e.warmed) {
    const std::size_t first = tracer ? tracer->records().size() : 0;
    launch();
    if (tracer) {  // the ops at this length, to learn how their work grows with it
      e.warm_ops.assign(tracer->records().begin() + std::ptrdiff_t(first),
                        tracer->records().end());
      e.warm_length = length;
    }
    // The warm-up itself may grow a buffer: the epoch after it is the one a capture sees.
    e.warmed = true;
    e.epoch = driver_.buffer_epoch();
    ++warmups_;
    return StepRun::kWarmup;
  }
  if (!capture(e, shape, launch_in, tracer, length)) {
    launch();  // nothing of the failed capture ran
    ++eager_;
    return StepRun::kEager;
  }
  if (driver_.buffer_epoch() != e.epoch) {
    // The capture grew a buffer (a launch sequence that differs from the warm-up's): its
    // recorded pointers may be stale. Run this step eagerly and start the shape over.
    e.exec.reset();
    e.ops.reset();
    e.warmed = false;
    launch();
    ++eager_;
    return StepRun::kEager;
  }
  ++captures_;
  launch_graph(e, tracer, length);
  return StepRun::kCaptured;
}

}  // namespace llmbench
