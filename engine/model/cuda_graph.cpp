// StepGraphs (see cuda_graph.h): warm-up, capture, replay and the fallback, per step shape.
#include "engine/model/cuda_graph.h"

#include <exception>
#include <utility>

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
                         const std::function<void()>& launch) {
  std::string why;
  bool capturing = false;
  try {
    driver_.begin_capture();
    capturing = true;
    launch();
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
  failed_ = true;
  note_ = "cuda graphs: capturing the " + what_ + " (batch " + std::to_string(shape.batch) +
          ", " + std::to_string(shape.n_new) + " new token" + (shape.n_new == 1 ? "" : "s") +
          ") failed (" + why + "); every " + what_ + " runs eagerly";
  return false;
}

StepRun StepGraphs::run(const StepShape& shape, const std::function<void()>& launch) {
  if (failed_) {
    launch();
    ++eager_;
    return StepRun::kEager;
  }
  Entry& e = entries_[shape];
  const std::uint64_t epoch = driver_.buffer_epoch();
  if (e.warmed && e.epoch != epoch) {  // a buffer the graph may point into moved: start over
    e.exec.reset();
    e.warmed = false;
  }
  if (e.exec) {
    driver_.launch(*e.exec);
    ++replays_;
    return StepRun::kReplayed;
  }
  if (!e.warmed) {
    launch();
    // The warm-up itself may grow a buffer: the epoch after it is the one a capture sees.
    e.warmed = true;
    e.epoch = driver_.buffer_epoch();
    ++warmups_;
    return StepRun::kWarmup;
  }
  if (!capture(e, shape, launch)) {
    launch();  // nothing of the failed capture ran
    ++eager_;
    return StepRun::kEager;
  }
  if (driver_.buffer_epoch() != e.epoch) {
    // The capture grew a buffer (a launch sequence that differs from the warm-up's): its
    // recorded pointers may be stale. Run this step eagerly and start the shape over.
    e.exec.reset();
    e.warmed = false;
    launch();
    ++eager_;
    return StepRun::kEager;
  }
  ++captures_;
  driver_.launch(*e.exec);
  return StepRun::kCaptured;
}

}  // namespace llmbench
