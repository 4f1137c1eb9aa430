// Chrome trace-event JSON reader (see import_chrome.h and docs/import.md).
// The file is parsed with nlohmann's callback parser so each event is handled and dropped as
// soon as it is complete: memory holds the imported trace, not the JSON document.
#include "tools/trace_io/import_chrome.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>

#include "engine/checkpoint/json_input.h"
#include "kernels/common/error.h"
#include "tools/trace_io/chrome_values.h"
#include "tools/trace_io/file_io.h"

namespace llmbench {

using json = nlohmann::json;

namespace {

// Deepest JSON nesting accepted (objects and arrays; the top level is 1).
constexpr int kMaxChromeNesting = 128;


class ChromeReader {
 public:
  ChromeReader(std::string path, std::size_t max_decompressed_bytes)
      : path_(std::move(path)), max_decompressed_bytes_(max_decompressed_bytes) {}

  ReadTrace read();

 private:
  struct Pending {  // a B or E event, matched per thread after sorting by time
    std::int64_t ts;
    bool begin;
    std::string name, cat;
    json args;
  };
  struct FlowPoint {  // an s, t or f event
    char phase;
    std::size_t thread;
    std::int64_t ts;
    bool enclosing;  // bind to the enclosing slice (else: the next slice)
    std::size_t seq;
  };
  struct BindPoint {  // an X event with flow v2 bind_id
    std::size_t slice;
    bool out, in;
  };

  void on_event(const json& e);
  void finish();
  std::size_t process_of(const json& e);
  std::size_t thread_of(const json& e);
  std::size_t thread_track(std::size_t thread);
  std::size_t track_for(std::size_t& slot_plus_one, TraceTrack track);
  void add_args(const json& args);
  void flatten(const json& v, const std::string& flat, const std::string& key);
  void set_columns_from_args(TraceSlice& s, const json& args);
  void add_complete(std::int64_t ts, std::int64_t dur, std::size_t track, const std::string& cat,
                    const std::string& name, const json* args1, const json* args2);
  void bind_flows(const TrackIndex& index);

  std::string path_;
  std::size_t max_decompressed_bytes_;
  ImportedTrace t_;
  std::map<std::string, std::size_t> process_by_key_;
  std::map<std::pair<std::size_t, std::string>, std::size_t> thread_by_key_;
  std::vector<std::size_t> thread_track_;  // per thread: track index + 1 (0: none yet)
  std::map<std::size_t, std::size_t> process_instant_track_;
  std::size_t global_instant_track_ = 0;  // + 1
  std::map<std::pair<std::size_t, std::string>, std::size_t> counter_track_;
  std::map<std::size_t, std::vector<Pending>> pending_;
  std::map<std::string, std::vector<FlowPoint>> flow_points_;
  std::map<std::string, std::vector<BindPoint>> bind_points_;
  std::size_t seq_ = 0;
};

std::size_t ChromeReader::process_of(const json& e) {
  auto it = e.find("pid");
  const bool text = it != e.end() && it->is_string();
  const std::string key = it == e.end() ? "0" : (text ? "s:" : "") + chrome_text(e, "pid");
  auto [pos, inserted] = process_by_key_.emplace(key, t_.processes.size());
  if (inserted) {
    TraceProcess p;
    if (text) p.name = it->get<std::string>();  // e.g. "CPU functions" (older PyTorch)
    else if (it != e.end()) p.pid = chrome_int(e, "pid");
    else p.pid = 0;
    t_.processes.push_back(std::move(p));
  }
  return pos->second;
}

std::size_t ChromeReader::thread_of(const json& e) {
  const std::size_t process = process_of(e);
  auto it = e.find("tid");
  const bool text = it != e.end() && it->is_string();
  const std::string key = it == e.end() ? "0" : (text ? "s:" : "") + chrome_text(e, "tid");
  auto [pos, inserted] = thread_by_key_.emplace(std::pair(process, key), t_.threads.size());
  if (inserted) {
    TraceThread th;
    th.process = process;
    if (text) th.name = it->get<std::string>();
    else if (it != e.end()) th.tid = chrome_int(e, "tid");
    else th.tid = 0;
    t_.threads.push_back(std::move(th));
    thread_track_.push_back(0);
  }
  return pos->second;
}

std::size_t ChromeReader::track_for(std::size_t& slot_plus_one, TraceTrack track) {
  if (!slot_plus_one) {
    t_.tracks.push_back(std::move(track));
    slot_plus_one = t_.tracks.size();
  }
  return slot_plus_one - 1;
}

std::size_t ChromeReader::thread_track(std::size_t thread) {
  TraceTrack k;
  k.type = "thread";  // may become 'gpu' in finish()
  k.thread = thread;
  return track_for(thread_track_[thread], std::move(k));
}

void ChromeReader::flatten(const json& v, const std::string& flat, const std::string& key) {
  switch (v.type()) {
    case json::value_t::object:
      for (const auto& [k, x] : v.items()) flatten(x, flat + "." + k, key + "." + k);
      break;
    case json::value_t::array:
      for (std::size_t i = 0; i < v.size(); ++i)
        flatten(v[i], flat, key + "[" + std::to_string(i) + "]");
      break;
    case json::value_t::string:
      t_.add_arg(flat, key, v.get<std::string>());
      break;
    case json::value_t::boolean:
      t_.add_arg(flat, key, std::int64_t(v.get<bool>()));
      break;
    case json::value_t::number_unsigned:
      if (v.get<std::uint64_t>() > std::uint64_t(INT64_MAX)) {
        t_.add_arg(flat, key, v.get<double>());
        break;
      }
      [[fallthrough]];
    case json::value_t::number_integer:
      t_.add_arg(flat, key, v.get<std::int64_t>());
      break;
    case json::value_t::number_float:
      t_.add_arg(flat, key, v.get<double>());
      break;
    default:  // null, binary: nothing to store
      break;
  }
}

void ChromeReader::add_args(const json& args) {
  if (!args.is_null()) flatten(args, "args", "args");
}

// Kineto keeps the correlation id and copy sizes in args; the event table has columns for them.
void ChromeReader::set_columns_from_args(TraceSlice& s, const json& args) {
  if (!args.is_object()) return;
  if (auto c = chrome_int(args, "correlation")) s.correlation_id = c;
  if (auto b = chrome_int(args, "bytes")) s.bytes = b;
  if (auto f = chrome_int(args, "flops")) s.flops = f;
}

void ChromeReader::add_complete(std::int64_t ts, std::int64_t dur, std::size_t track,
                                const std::string& cat, const std::string& name,
                                const json* args1, const json* args2) {
  t_.add_slice(ts, dur, track, cat, name);
  for (const json* a : {args1, args2}) {
    if (!a) continue;
    set_columns_from_args(t_.slices.back(), *a);
    add_args(*a);
  }
}

void ChromeReader::on_event(const json& e) {
  if (!e.is_object()) return t_.skip("trace entry that is not an object");
  auto ph_it = e.find("ph");
  if (ph_it == e.end() || !ph_it->is_string() || ph_it->get_ref<const std::string&>().size() != 1)
    return t_.skip("event without a one-letter ph");
  const char ph = ph_it->get_ref<const std::string&>()[0];
  const std::string name = chrome_text(e, "name"), cat = chrome_text(e, "cat");
  static const json kNoArgs;
  auto args_it = e.find("args");
  const json& args = args_it == e.end() ? kNoArgs : *args_it;

  if (ph == 'M') {
    const std::string value = args.is_object() ? chrome_text(args, "name") : "";
    if (name == "process_name" && !value.empty()) t_.processes[process_of(e)].name = value;
    else if (name == "thread_name" && !value.empty()) t_.threads[thread_of(e)].name = value;
    return;  // sort indexes, labels: display hints only
  }
  const auto ts = chrome_us_to_ns(e.contains("ts") ? e["ts"] : json());
  if (!ts) return t_.skip("event without a numeric ts");

  switch (ph) {
    case 'X': {
      auto dur_it = e.find("dur");
      if (dur_it == e.end()) return t_.skip("X event without dur");
      const auto dur = chrome_us_to_ns(*dur_it);
      if (!dur) return t_.skip("X event with a non-numeric dur");
      if (const char* problem = duration_problem(*ts, *dur)) return t_.skip(problem);
      add_complete(*ts, *dur, thread_track(thread_of(e)), cat, name, &args, nullptr);
      if (e.contains("bind_id")) {
        const bool out = e.value("flow_out", false), in = e.value("flow_in", false);
        if (out || in)
          bind_points_[cat + '\x1f' + e["bind_id"].dump()].push_back(
              {t_.slices.size() - 1, out, in});
      }
      return;
    }
    case 'B':
    case 'E':
      pending_[thread_of(e)].push_back({*ts, ph == 'B', name, cat, args});
      return;
    case 'i':
    case 'I':
    case 'R': {
      const std::string scope = chrome_text(e, "s");
      std::size_t track;
      if (scope == "g") {
        track = track_for(global_instant_track_, {"global instant events", "global", {}, {}, {}, {}});
      } else if (scope == "p") {
        const std::size_t p = process_of(e);
        std::size_t& slot = process_instant_track_[p];
        track = track_for(slot, {"process instant events", "process", {}, p, {}, {}});
      } else {
        track = thread_track(thread_of(e));
      }
      add_complete(*ts, 0, track, cat, name, &args, nullptr);
      return;
    }
    case 'C': {
      if (!args.is_object() || args.empty()) return t_.skip("C event without values");
      const std::size_t p = process_of(e);
      for (const auto& [key, v] : args.items()) {
        double value;
        if (v.is_number()) value = v.get<double>();
        else if (v.is_string()) {
          char* end = nullptr;
          const std::string& s = v.get_ref<const std::string&>();
          value = std::strtod(s.c_str(), &end);
          if (s.empty() || end != s.c_str() + s.size()) {
            t_.skip("non-numeric counter value");
            continue;
          }
        } else {
          t_.skip("non-numeric counter value");
          continue;
        }
        const std::string track_name = name + " " + key;  // trace processor's naming
        std::size_t& slot = counter_track_[{p, track_name}];
        const std::size_t track = track_for(slot, {track_name, "counter", {}, p, {}, {}});
        t_.counters.push_back({*ts, track, value});
      }
      return;
    }
    case 's':
    case 't':
    case 'f': {
      std::string id;
      if (e.contains("id")) id = e["id"].dump();
      else if (e.contains("id2")) id = e["id2"].dump();
      else return t_.skip("flow event without id");
      const bool enclosing = ph != 'f' || chrome_text(e, "bp") == "e";
      flow_points_[cat + '\x1f' + name + '\x1f' + id].push_back(
          {ph, thread_of(e), *ts, enclosing, seq_++});
      return;
    }
    default:
      return t_.skip(std::string("unsupported phase '") + ph + "'");
  }
}

void ChromeReader::finish() {
  // B/E pairs, per thread, in time order (file order breaks ties), as trace processor sorts.
  for (auto& [thread, events] : pending_) {
    std::stable_sort(events.begin(), events.end(),
                     [](const Pending& a, const Pending& b) { return a.ts < b.ts; });
    std::vector<const Pending*> open;
    const std::size_t track = thread_track(thread);
    for (const Pending& p : events) {
      if (p.begin) {
        open.push_back(&p);
        continue;
      }
      if (open.empty()) {
        t_.skip("E without a matching B");
        continue;
      }
      const Pending& b = *open.back();
      open.pop_back();
      if (const char* problem = interval_problem(b.ts, p.ts)) {
        t_.skip(problem);
        continue;
      }
      add_complete(b.ts, p.ts - b.ts, track, b.cat, b.name.empty() ? p.name : b.name, &b.args,
                   &p.args);
    }
    if (!open.empty()) t_.skip("B without a matching E", std::int64_t(open.size()));
  }
  pending_.clear();

  // Thread tracks take their thread's name; tracks of device activity only are GPU streams.
  std::vector<int> gpu(t_.tracks.size(), -1);  // -1 unknown, 1 all GPU, 0 some host
  for (const auto& s : t_.slices) {
    const bool g = is_chrome_gpu_category(t_.strings[s.category]);
    int& v = gpu[s.track];
    v = (v == -1 || v == 1) && g ? 1 : 0;
  }
  for (std::size_t i = 0; i < t_.tracks.size(); ++i) {
    TraceTrack& k = t_.tracks[i];
    if (!k.thread) continue;
    const TraceThread& th = t_.threads[*k.thread];
    k.name = !th.name.empty() ? th.name
             : th.tid         ? "thread " + std::to_string(*th.tid)
                              : "thread";
    if (gpu[i] == 1) {
      k.type = "gpu";
      k.device_id = t_.processes[th.process].pid;
      k.stream_id = th.tid;
    }
  }
}

void ChromeReader::bind_flows(const TrackIndex& index) {
  auto bind = [&](const FlowPoint& p) -> std::optional<std::size_t> {
    const std::size_t track = thread_track_[p.thread];
    if (!track) return std::nullopt;
    return p.enclosing ? index.enclosing(t_, track - 1, p.ts)
                       : index.next_at_or_after(t_, track - 1, p.ts);
  };
  auto rank = [](char ph) { return ph == 's' ? 0 : ph == 't' ? 1 : 2; };
  for (auto& [key, points] : flow_points_) {
    std::sort(points.begin(), points.end(), [&](const FlowPoint& a, const FlowPoint& b) {
      if (a.ts != b.ts) return a.ts < b.ts;
      if (rank(a.phase) != rank(b.phase)) return rank(a.phase) < rank(b.phase);
      return a.seq < b.seq;
    });
    bool open = false;     // a flow has started and not ended
    std::size_t last = 0;  // the open flow's latest slice
    // The slice of the last flow that ended on an 'f' straight after its start, while no new
    // start came: Kineto writes one 'f' per kernel of a CUDA graph launch, all with the launch's
    // correlation id, against one 's' on the cudaGraphLaunch call. Each becomes a flow from that
    // call (trace processor keeps only the first).
    std::optional<std::size_t> fan_out;
    bool last_was_start = false;
    for (const FlowPoint& p : points) {
      if (p.phase == 'f' && !open && fan_out) {
        if (const auto slice = bind(p)) {
          t_.flows.push_back({*fan_out, *slice});
          t_.note("flow ends sharing one start (one per kernel of a CUDA graph launch)");
        } else {
          t_.skip("flow event on no slice");
        }
        continue;
      }
      if (p.phase != 's' && !open) {
        t_.skip(p.phase == 'f' ? "flow end without a start" : "flow step without a start");
        continue;
      }
      if (p.phase == 's' && open) t_.skip("flow start without an end");
      const auto slice = bind(p);
      if (!slice) {
        t_.skip("flow event on no slice");
        open = false;
        fan_out.reset();
        continue;
      }
      if (p.phase != 's') t_.flows.push_back({last, *slice});
      fan_out = p.phase == 'f' && last_was_start ? std::optional(last) : std::nullopt;
      last_was_start = p.phase == 's';
      open = p.phase != 'f';
      last = *slice;
    }
    if (open) t_.skip("flow start without an end");
  }
  for (const auto& [key, points] : bind_points_) {
    bool linked = false;
    for (const BindPoint& o : points)
      for (const BindPoint& i : points)
        if (o.out && i.in && o.slice != i.slice) {
          t_.flows.push_back({o.slice, i.slice});
          linked = true;
        }
    if (!linked) t_.skip("bind_id without a partner", std::int64_t(points.size()));
  }
}

ReadTrace ChromeReader::read() {
  const std::string text = read_maybe_gzip(path_, "chrome trace", max_decompressed_bytes_);
  bool array_form = false, object_form = false;
  std::string top_key;
  // Nesting is bounded before anything recurses over it (the parser, flattening args, dump(),
  // copies): 20,000 nested arrays in args overflowed the stack. Real traces nest a few levels.
  JsonLimits limits;
  limits.max_depth = kMaxChromeNesting;
  auto result = parse_json(text, limits, [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth == 0 && event == json::parse_event_t::array_start) array_form = true;
    if (depth == 0 && event == json::parse_event_t::object_start) object_form = true;
    if (depth == 1 && event == json::parse_event_t::key && object_form)
      top_key = parsed.get<std::string>();
    const bool event_end = event == json::parse_event_t::object_end ||
                           (event == json::parse_event_t::value && depth > 0);
    const bool in_events = (array_form && depth == 1) ||
                           (object_form && depth == 2 && top_key == "traceEvents");
    if (event_end && in_events) {
      on_event(parsed);
      return false;  // handled: drop it from the document
    }
    return true;
  });
  if (!result.ok() && result.error.rfind("nested deeper", 0) == 0)
    throw BadInput("chrome trace '" + path_ + "': JSON " + result.error +
                   "; a trace event's args nest a few levels");
  if (!result.ok())
    throw BadInput("chrome trace '" + path_ + "': invalid JSON (" + result.error + ")");
  json doc = std::move(result.value);
  if (object_form) {
    auto it = doc.find("traceEvents");
    if (it == doc.end() || !it->is_array())
      throw BadInput("chrome trace '" + path_ +
                     "': the JSON object has no traceEvents array (expected Chrome trace-event "
                     "JSON: an array of events or an object with traceEvents)");
    doc.erase("traceEvents");
    t_.metadata = doc;
    t_.source_version = doc.contains("schemaVersion")
                            ? "object, schemaVersion " + chrome_text(doc, "schemaVersion")
                            : "object";
  } else if (array_form) {
    t_.source_version = "array";
  } else {
    throw BadInput("chrome trace '" + path_ +
                   "': expected a JSON array of events or an object with traceEvents");
  }
  finish();
  ReadTrace out;
  out.index = TrackIndex(t_);
  bind_flows(out.index);
  out.trace = std::move(t_);
  return out;
}

}  // namespace

ReadTrace read_chrome_trace(const std::string& path, std::size_t max_decompressed_bytes) {
  return ChromeReader(path, max_decompressed_bytes).read();
}

}  // namespace llmbench
