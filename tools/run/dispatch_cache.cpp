// The decode op classes' table in the roofline cache (see dispatch_cache.h).
#include "tools/run/dispatch_cache.h"

#include <fmt/core.h>

#include "engine/model/cpu_backend.h"
#include "tools/run/machine_load.h"
#include "tools/run/peaks_cache.h"
#include "tools/store/run_info.h"

namespace llmbench {

using nlohmann::json;

namespace {

std::optional<cpu::IsaPath> path_named(const std::string& s) {
  for (cpu::IsaPath p : {cpu::IsaPath::kAvx512, cpu::IsaPath::kAvx2, cpu::IsaPath::kPortable})
    if (s == cpu::isa_path_name(p)) return p;
  return std::nullopt;
}

// "avx2 for every class" or "decode_fp32_m1 avx2, decode_fp32_m2_8 portable, ...".
std::string table_summary(const cpu::DecodeTable& t) {
  std::string all;
  bool same = true;
  for (int c = 0; c < cpu::kDecodeClasses; ++c) {
    const std::string p = t[c] ? cpu::isa_path_name(*t[c]) : "widest";
    same = same && (c == 0 || p == (t[0] ? cpu::isa_path_name(*t[0]) : "widest"));
    all += (c ? ", " : "") + cpu::decode_class_name(c) + " " + p;
  }
  return same && t[0] ? std::string(cpu::isa_path_name(*t[0])) + " for every decode class" : all;
}

}  // namespace

std::string dispatch_cache_key(int threads) {
  return "cpu-dispatch|" + cpu_model_name() + "|" + cpu::cpu_feature_flags() +
         "|threads=" + std::to_string(threads);
}

json dispatch_entry(const DispatchMeasurement& m) {
  const MachineLoad load = current_machine_load();
  json classes = json::object();
  for (const ClassTiming& ct : m.classes) {
    json med = json::object(), samples = json::object();
    for (const PathTiming& p : ct.paths)
      if (ct.paths.size() > 1) {
        med[cpu::isa_path_name(p.path)] = p.median_ms;
        samples[cpu::isa_path_name(p.path)] = p.samples;
      }
    classes[cpu::decode_class_name(ct.cls)] = {{"path", cpu::isa_path_name(ct.winner)},
                                               {"median_ms", med},
                                               {"samples", samples},
                                               {"copies", ct.copies},
                                               {"passes_per_sample", ct.passes_per_sample}};
  }
  return {{"measured_at", utc_now_iso8601()}, {"load", load.describe()}, {"busy", load.busy()},
          {"rounds", m.rounds}, {"seconds", m.seconds}, {"classes", classes}};
}

std::optional<cpu::DecodeTable> dispatch_table(const json& entry) {
  if (!entry.is_object() || !entry.contains("classes") || !entry["classes"].is_object())
    return std::nullopt;
  const json& classes = entry["classes"];
  cpu::DecodeTable t;
  for (int c = 0; c < cpu::kDecodeClasses; ++c) {
    const std::string name = cpu::decode_class_name(c);
    if (!classes.contains(name) || !classes[name].is_object() ||
        !classes[name].contains("path") || !classes[name]["path"].is_string())
      return std::nullopt;
    t[c] = path_named(classes[name]["path"].get<std::string>());
    if (!t[c]) return std::nullopt;
  }
  return t;
}

DispatchMeasurement measure_and_cache_dispatch(const ModelConfig& c, int threads) {
  const DecodeShapes shapes = decode_shapes(c);
  const DispatchMeasurement m = measure_decode_dispatch(shapes);
  const std::string key = dispatch_cache_key(threads);
  json entry = read_roofline_cache().value(key, json::object());
  if (!entry.is_object()) entry = json::object();
  entry[shapes.signature] = dispatch_entry(m);
  write_roofline_cache_entry(key, entry);
  return m;
}

std::string describe_dispatch(const DispatchMeasurement& m) {
  std::string s;
  for (const ClassTiming& ct : m.classes) {
    std::string times;
    for (const PathTiming& p : ct.paths)
      times += (times.empty() ? "" : ", ") +
               fmt::format("{} {:.3f} ms ({})", cpu::isa_path_name(p.path), p.median_ms,
                           p.samples);
    s += fmt::format("  {:<18} {:<9} {}\n", cpu::decode_class_name(ct.cls),
                     cpu::isa_path_name(ct.winner),
                     ct.paths.size() > 1 ? times : std::string("(the only path)"));
  }
  return s;
}

std::string install_cpu_dispatch(const ModelConfig& c, int threads, bool may_measure) {
  if (cpu::cpu_isa_forced()) {
    cpu::set_decode_table(cpu::DecodeTable{});
    return fmt::format("CPU kernels: {} for every op class (forced by LLMBENCH_CPU_ISA)",
                       cpu::cpu_isa_name());
  }
  const std::string key = dispatch_cache_key(threads);
  const std::string sig = decode_shapes(c).signature;
  const json cache = read_roofline_cache();
  std::optional<cpu::DecodeTable> t;
  std::string origin;
  if (cache.contains(key) && cache[key].is_object() && cache[key].contains(sig)) {
    const json& e = cache[key][sig];
    t = dispatch_table(e);
    // As with the peaks: a table timed on a busy machine is timed again once it is quiet.
    if (t && e.value("busy", false) && may_measure && !current_machine_load().busy()) t.reset();
    if (t)
      origin = "measured on " + e.value("measured_at", std::string("?")) +
               (e.value("busy", false) ? " on a busy machine (" + e.value("load", std::string("?")) + ")"
                                       : std::string()) +
               " (cache " + roofline_cache_path() + ")";
  }
  if (!t && may_measure) {
    const DispatchMeasurement m = measure_and_cache_dispatch(c, threads);
    t = dispatch_table(dispatch_entry(m));
    origin = fmt::format("measured now in {:.2f} s (cached in {})", m.seconds,
                         roofline_cache_path());
  }
  if (!t) {
    cpu::set_decode_table(cpu::DecodeTable{});
    return fmt::format("CPU kernels: {}, the widest path for every op class (no measured table "
                       "for {} in the cache; `llmbench roofline --dispatch-only --model {}` "
                       "measures one)",
                       cpu::cpu_isa_name(), sig, c.name);
  }
  cpu::set_decode_table(*t);
  return fmt::format("CPU kernels: {}; decode matmul: {} ({}, {})", cpu::cpu_isa_name(),
                     table_summary(*t), sig, origin);
}

}  // namespace llmbench
