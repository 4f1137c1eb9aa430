// Chrome trace-event JSON fixtures for import tests, shaped as the PyTorch profiler (Kineto)
// writes them (object form with traceEvents, cat, args, displayTimeUnit, baseTimeNanoseconds,
// ac2g flows), plus the phases other tools use (B/E, instants, counters, flow v2). Built here
// so the tests can compute every expectation from the same JSON.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace llmbench_test {

using json = nlohmann::json;

inline json x_event(const std::string& cat, const std::string& name, json pid, json tid, json ts,
                    json dur, json args = json::object()) {
  json e = {{"ph", "X"}, {"cat", cat}, {"name", name}, {"pid", pid},
            {"tid", tid}, {"ts", ts},  {"dur", dur}};
  if (!args.empty()) e["args"] = args;
  return e;
}

// Kineto-shaped: CPU thread 1235 of pid 1234, GPU 0 stream 7. Microseconds:
//   my_range (user_annotation) [100.0004, 160.0004)
//     aten::linear [101.5, 131.75)
//       aten::t [101.6006, 102.601)           (ts rounds up to 101601 ns, dur down to 1000)
//       aten::addmm [103, 130)
//         cudaLaunchKernel [110, 115) corr 42 -> sgemm_128x64 [130, 142.345) stream 7
//     aten::relu [140, 150)
//       cudaLaunchKernel [141, 145) corr 43   -> relu_kernel [145.5, 147.5)
//     cudaMemcpyAsync [152, 155) corr 44      -> Memcpy DtoH 4096 B [156, 159)
//   aten::straddle [155, 165): starts in my_range, ends after it (a partial overlap)
//   aten::add [170, 175)
// GPU: gpu_user_annotation my_range [130, 159) around the device work.
// Thread 1236: B/E b_outer [200, 210) holding b_inner [201, 205), then an unmatched E at 215 and
// a B at 220 that never ends. Flow v2: producer (1236) -> consumer (1235) by bind_id 7.
// Counters "GPU Memory" (allocated, reserved); instants at thread, process and global scope.
// Input records that must be skipped: a negative dur, an event without ts, a 'P' sample.
inline json kineto_trace() {
  const int cpu = 1234, tid = 1235, tid2 = 1236, gpu = 0, stream = 7;
  json ev = json::array();
  ev.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", cpu}, {"tid", 0},
                {"args", {{"name", "python3"}}}});
  ev.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", cpu}, {"tid", tid},
                {"args", {{"name", "thread 1235 (python3)"}}}});
  ev.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", gpu}, {"tid", 0},
                {"args", {{"name", "GPU 0"}}}});
  ev.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", gpu}, {"tid", stream},
                {"args", {{"name", "stream 7"}}}});
  ev.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", gpu}, {"tid", 0},
                {"args", {{"sort_index", 5}}}});
  ev.push_back(x_event("user_annotation", "my_range", cpu, tid, 100.0004, 60.0,
                       {{"External id", 1}}));
  ev.push_back(x_event("cpu_op", "aten::linear", cpu, tid, 101.5, 30.25,
                       {{"External id", 2}, {"Input Dims", {{4, 16}, {32, 16}}}}));
  ev.push_back(x_event("cpu_op", "aten::t", cpu, tid, 101.6006, 1.0004));
  ev.push_back(x_event("cpu_op", "aten::addmm", cpu, tid, 103, 27));
  ev.push_back(x_event("cuda_runtime", "cudaLaunchKernel", cpu, tid, 110, 5,
                       {{"correlation", 42}, {"External id", 3}}));
  ev.push_back({{"ph", "s"}, {"id", 42}, {"pid", cpu}, {"tid", tid}, {"ts", 110},
                {"cat", "ac2g"}, {"name", "launch"}});
  ev.push_back(x_event("cpu_op", "aten::relu", cpu, tid, 140, 10));
  ev.push_back(x_event("cuda_runtime", "cudaLaunchKernel", cpu, tid, 141, 4,
                       {{"correlation", 43}}));
  ev.push_back({{"ph", "s"}, {"id", 43}, {"pid", cpu}, {"tid", tid}, {"ts", 141},
                {"cat", "ac2g"}, {"name", "launch"}});
  ev.push_back(x_event("cuda_runtime", "cudaMemcpyAsync", cpu, tid, 152, 3,
                       {{"correlation", 44}}));
  ev.push_back({{"ph", "s"}, {"id", 44}, {"pid", cpu}, {"tid", tid}, {"ts", 152},
                {"cat", "ac2g"}, {"name", "launch"}});
  ev.push_back(x_event("cpu_op", "aten::straddle", cpu, tid, 155, 10));
  ev.push_back(x_event("cpu_op", "aten::add", cpu, tid, 170, 5));
  // Device side, written after the host side as Kineto does; flow ends bind to the enclosing
  // slice ("bp": "e").
  ev.push_back(x_event("gpu_user_annotation", "my_range", gpu, stream, 130, 29));
  ev.push_back(x_event("kernel", "sgemm_128x64", gpu, stream, 130, 12.345,
                       {{"correlation", 42}, {"device", 0}, {"stream", 7},
                        {"grid", {4, 1, 1}}, {"block", {128, 1, 1}}}));
  ev.push_back({{"ph", "f"}, {"id", 42}, {"pid", gpu}, {"tid", stream}, {"ts", 130},
                {"cat", "ac2g"}, {"name", "launch"}, {"bp", "e"}});
  ev.push_back(x_event("kernel", "relu_kernel", gpu, stream, 145.5, 2, {{"correlation", 43}}));
  ev.push_back({{"ph", "f"}, {"id", 43}, {"pid", gpu}, {"tid", stream}, {"ts", 145.5},
                {"cat", "ac2g"}, {"name", "launch"}, {"bp", "e"}});
  ev.push_back(x_event("gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", gpu, stream, 156, 3,
                       {{"correlation", 44}, {"bytes", 4096}}));
  ev.push_back({{"ph", "f"}, {"id", 44}, {"pid", gpu}, {"tid", stream}, {"ts", 156},
                {"cat", "ac2g"}, {"name", "launch"}, {"bp", "e"}});
  // Other phases.
  ev.push_back({{"ph", "C"}, {"name", "GPU Memory"}, {"pid", gpu}, {"ts", 100},
                {"args", {{"allocated", 1024}, {"reserved", "2048"}}}});
  ev.push_back({{"ph", "C"}, {"name", "GPU Memory"}, {"pid", gpu}, {"ts", 150},
                {"args", {{"allocated", 4096}}}});
  ev.push_back({{"ph", "i"}, {"s", "t"}, {"name", "mark"}, {"pid", cpu}, {"tid", tid},
                {"ts", 105}});
  ev.push_back({{"ph", "i"}, {"s", "p"}, {"name", "process_mark"}, {"pid", cpu}, {"tid", tid},
                {"ts", 107}});
  ev.push_back({{"ph", "I"}, {"s", "g"}, {"name", "global_mark"}, {"pid", cpu}, {"tid", tid},
                {"ts", 106}});
  ev.push_back({{"ph", "B"}, {"name", "b_outer"}, {"cat", "user"}, {"pid", cpu}, {"tid", tid2},
                {"ts", 200}});
  ev.push_back({{"ph", "B"}, {"name", "b_inner"}, {"pid", cpu}, {"tid", tid2}, {"ts", 201},
                {"args", {{"a", 1}}}});
  ev.push_back({{"ph", "E"}, {"pid", cpu}, {"tid", tid2}, {"ts", 205}, {"args", {{"r", 2}}}});
  ev.push_back({{"ph", "E"}, {"pid", cpu}, {"tid", tid2}, {"ts", 210}});
  ev.push_back({{"ph", "E"}, {"pid", cpu}, {"tid", tid2}, {"ts", 215}});
  ev.push_back({{"ph", "B"}, {"name", "never_closed"}, {"pid", cpu}, {"tid", tid2},
                {"ts", 220}});
  json producer = x_event("user", "producer", cpu, tid2, 230, 1);
  producer["bind_id"] = 7;
  producer["flow_out"] = true;
  json consumer = x_event("user", "consumer", cpu, tid, 240, 1);
  consumer["bind_id"] = 7;
  consumer["flow_in"] = true;
  ev.push_back(producer);
  ev.push_back(consumer);
  ev.push_back(x_event("cpu_op", "negative", cpu, tid, 300, -1));
  ev.push_back({{"ph", "X"}, {"name", "no_ts"}, {"pid", cpu}, {"tid", tid}, {"dur", 1}});
  ev.push_back({{"ph", "P"}, {"name", "sample"}, {"pid", cpu}, {"tid", tid}, {"ts", 301}});
  return {{"schemaVersion", 1},
          {"deviceProperties", {{{"id", 0}, {"name", "NVIDIA H100"}}}},
          {"traceEvents", ev},
          {"displayTimeUnit", "ms"},
          {"baseTimeNanoseconds", 1700000000000000000LL}};
}

}  // namespace llmbench_test
