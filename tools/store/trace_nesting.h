// Depth and parent of every imported slice, computed per track as trace processor does: slices
// sorted by start (longer first on ties) nest inside the open slice that contains them. A slice
// that starts inside an open slice but ends after it (a partial overlap, e.g. two NVTX domains
// or start/end ranges interleaving) cannot nest; it moves to an overlap track beside the
// original ("<name> (overlap 1)"), so every track holds properly nested slices only. Also the
// lookups flow binding needs: the innermost slice enclosing a time, the next slice after it.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "tools/store/trace_model.h"

namespace llmbench {

// Built once over a trace whose slices are all added; the lookups take that same trace.
class TrackIndex {
 public:
  TrackIndex() = default;
  // Sets depth and parent of every slice of `t`, adding overlap tracks where needed
  // (t.notes counts the slices moved).
  explicit TrackIndex(ImportedTrace& t);

  // The innermost slice on `track` (or its overlap tracks) with ts <= time < ts + dur, or a
  // zero-duration slice at exactly `time`; nullopt if none.
  std::optional<std::size_t> enclosing(const ImportedTrace& t, std::size_t track,
                                       std::int64_t time) const;
  // The first slice on `track` (or its overlap tracks) starting at or after `time`.
  std::optional<std::size_t> next_at_or_after(const ImportedTrace& t, std::size_t track,
                                              std::int64_t time) const;
  // Slice indices in the order they should be stored: by start, parents before children.
  const std::vector<std::size_t>& write_order() const { return write_order_; }

 private:
  std::optional<std::size_t> enclosing_on(const ImportedTrace& t, std::size_t lane,
                                          std::int64_t time) const;

  std::vector<std::vector<std::size_t>> by_track_;  // per track: slices by (ts, depth)
  std::vector<std::vector<std::size_t>> lanes_;     // per original track: it and its overlaps
  std::vector<std::size_t> write_order_;
};

// A reader's result (import_nsys.h, import_chrome.h): the trace and its nesting, ready for
// write_import().
struct ReadTrace {
  ImportedTrace trace;
  TrackIndex index;
};

}  // namespace llmbench
