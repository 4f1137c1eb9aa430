// Nesting of imported slices and lookups by time (see trace_nesting.h).
#include "tools/store/trace_nesting.h"

#include <algorithm>
#include <string>

namespace llmbench {

namespace {

std::int64_t end_of(const TraceSlice& s) { return s.ts + s.dur; }

bool contains(const TraceSlice& s, std::int64_t time) {
  return s.ts <= time && (time < end_of(s) || (s.dur == 0 && time == s.ts));
}

}  // namespace

TrackIndex::TrackIndex(ImportedTrace& t) {
  const std::size_t original_tracks = t.tracks.size();
  std::vector<std::vector<std::size_t>> per_track(original_tracks);
  for (std::size_t i = 0; i < t.slices.size(); ++i) per_track[t.slices[i].track].push_back(i);

  lanes_.resize(original_tracks);
  for (std::size_t tr = 0; tr < original_tracks; ++tr) {
    auto& order = per_track[tr];
    // Start ascending, longer first on equal starts (the enclosing one), then input order.
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      const TraceSlice &x = t.slices[a], &y = t.slices[b];
      return x.ts != y.ts ? x.ts < y.ts : x.dur > y.dur;
    });
    lanes_[tr].push_back(tr);
    std::vector<std::vector<std::size_t>> stacks(1);  // open slices, per lane
    for (std::size_t i : order) {
      TraceSlice& s = t.slices[i];
      std::size_t lane = 0;
      for (; lane < stacks.size(); ++lane) {
        auto& open = stacks[lane];
        while (!open.empty() && end_of(t.slices[open.back()]) <= s.ts) open.pop_back();
        if (open.empty() || end_of(s) <= end_of(t.slices[open.back()])) break;
      }
      if (lane == stacks.size()) {
        stacks.emplace_back();
        TraceTrack overlap = t.tracks[tr];
        overlap.name += " (overlap " + std::to_string(lane) + ")";
        t.tracks.push_back(std::move(overlap));
        lanes_[tr].push_back(t.tracks.size() - 1);
      }
      if (lane > 0) t.note("slices moved to overlap tracks (partial overlap on their own track)");
      auto& open = stacks[lane];
      s.depth = int(open.size());
      s.parent = open.empty() ? kNoParent : std::int64_t(open.back());
      s.track = lanes_[tr][lane];
      open.push_back(i);
    }
  }

  // Parents start no later than their children and are shallower: (ts, depth) puts them first.
  auto by_start = [&](std::size_t a, std::size_t b) {
    const TraceSlice &x = t.slices[a], &y = t.slices[b];
    if (x.ts != y.ts) return x.ts < y.ts;
    if (x.depth != y.depth) return x.depth < y.depth;
    return a < b;
  };
  by_track_.resize(t.tracks.size());
  write_order_.resize(t.slices.size());
  for (std::size_t i = 0; i < t.slices.size(); ++i) {
    by_track_[t.slices[i].track].push_back(i);
    write_order_[i] = i;
  }
  for (auto& v : by_track_) std::sort(v.begin(), v.end(), by_start);
  std::sort(write_order_.begin(), write_order_.end(), by_start);
}

std::optional<std::size_t> TrackIndex::enclosing_on(const ImportedTrace& t, std::size_t lane,
                                                    std::int64_t time) const {
  const auto& v = by_track_[lane];
  // The last slice starting at or before `time` is the deepest candidate; every slice that
  // encloses `time` is it or one of its ancestors (slices on a lane nest properly).
  auto it = std::upper_bound(v.begin(), v.end(), time,
                             [&](std::int64_t x, std::size_t i) { return x < t.slices[i].ts; });
  if (it == v.begin()) return std::nullopt;
  std::int64_t i = std::int64_t(*(it - 1));
  while (i != kNoParent) {
    if (contains(t.slices[std::size_t(i)], time)) return std::size_t(i);
    i = t.slices[std::size_t(i)].parent;
  }
  return std::nullopt;
}

std::optional<std::size_t> TrackIndex::enclosing(const ImportedTrace& t, std::size_t track,
                                                 std::int64_t time) const {
  std::optional<std::size_t> best;
  const std::vector<std::size_t> self{track};
  for (std::size_t lane : track < lanes_.size() ? lanes_[track] : self) {
    const auto found = enclosing_on(t, lane, time);
    if (!found) continue;
    const TraceSlice& f = t.slices[*found];
    if (!best || f.ts > t.slices[*best].ts ||
        (f.ts == t.slices[*best].ts && f.depth > t.slices[*best].depth))
      best = found;
  }
  return best;
}

std::optional<std::size_t> TrackIndex::next_at_or_after(const ImportedTrace& t,
                                                        std::size_t track,
                                                        std::int64_t time) const {
  std::optional<std::size_t> best;
  const std::vector<std::size_t> self{track};
  for (std::size_t lane : track < lanes_.size() ? lanes_[track] : self) {
    const auto& v = by_track_[lane];
    auto it = std::lower_bound(v.begin(), v.end(), time,
                               [&](std::size_t i, std::int64_t x) { return t.slices[i].ts < x; });
    if (it == v.end()) continue;
    if (!best || t.slices[*it].ts < t.slices[*best].ts) best = *it;
  }
  return best;
}

}  // namespace llmbench
