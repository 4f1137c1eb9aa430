// A torch.profiler 2.x (Kineto) trace of two decode steps of transformers' Llama, in the shape
// scripts/gpu_torch_peer.py records and Kineto's ChromeTraceLogger writes: top-level
// schemaVersion / deviceProperties / record_shapes / displayTimeUnit / baseTimeNanoseconds /
// traceName, relative microsecond timestamps with three decimals, metadata events with a ts,
// string pids ("Spans", "Traces", and "" on the closing instant), each step in a record_function
// range `decode_step` holding one range per nn.Linear (q_proj ... lm_head) with aten::linear ->
// aten::mm -> cudaLaunchKernel -> ac2g flow -> kernel, plus a Triton kernel through the driver
// API (cuLaunchKernel), a CUDA graph launch whose three kernels share its correlation id (one
// 's', three 'f'), the token copy to the host and gpu_user_annotation mirrors on the stream.
// One layer only: enough to check attribution; the expected figures are stated beside the data.
#pragma once
#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace llmbench_test {

struct KinetoKernel {
  std::string range, kernel;
  double dur_us;
};

// Kernel time per step (two steps): q_proj launches two kernels (split-K GEMM + reduce).
//   qkv_proj (q + k + v) 57.0 us, o_proj 19.0, gate_up_proj (gate + up) 81.5, down_proj 41.5,
//   lm_head 78.0: 277.0 us per step over the five; kernels per step: qkv 3.5, gate_up 2, rest 1.
inline std::vector<KinetoKernel> kineto_decode_kernels(int step) {
  const double d = step;  // step 1 runs every kernel 1 us longer than step 0
  std::vector<KinetoKernel> k;
  if (step == 0) {
    k.push_back({"q_proj", "gemmSN_TN_kernel<half>", 15.0});
    k.push_back({"q_proj", "splitKreduce_kernel<half>", 3.5});
  } else {
    k.push_back({"q_proj", "gemv2T_kernel_val<half>", 19.5});
  }
  k.push_back({"k_proj", "gemv2T_kernel_val<half>", 18.5 + d});
  k.push_back({"v_proj", "gemv2T_kernel_val<half>", 18.5 + d});
  k.push_back({"o_proj", "gemv2T_kernel_val<half>", 18.5 + d});
  k.push_back({"gate_proj", "gemv2T_kernel_val<half>", 40.25 + d});
  k.push_back({"up_proj", "gemv2T_kernel_val<half>", 40.25 + d});
  k.push_back({"down_proj", "gemv2T_kernel_val<half>", 41.0 + d});
  k.push_back({"lm_head", "gemv2T_kernel_val<half>", 77.5 + d});
  return k;
}

inline nlohmann::json kineto_decode_trace() {
  using json = nlohmann::json;
  const int pid = 4242, tid = 4242, gpu = 0, stream = 7;
  json ev = json::array();
  auto meta = [&](const char* what, json p, json t, json args) {
    ev.push_back({{"name", what}, {"ph", "M"}, {"ts", 5.125}, {"pid", p}, {"tid", t},
                  {"args", args}});
  };
  meta("process_name", pid, 0, {{"name", "python3"}});
  meta("process_labels", pid, 0, {{"labels", "CPU"}});
  meta("thread_name", pid, tid, {{"name", "thread 4242 (python3)"}});
  meta("process_name", gpu, 0, {{"name", "GPU 0"}});
  meta("process_labels", gpu, 0, {{"labels", "GPU 0"}});
  meta("thread_name", gpu, stream, {{"name", "stream 7 "}});
  auto x = [&](const char* cat, const std::string& name, json p, json t, double ts, double dur,
               json args = json::object()) {
    json e = {{"ph", "X"}, {"cat", cat}, {"name", name}, {"pid", p}, {"tid", t},
              {"ts", ts}, {"dur", dur}};
    if (!args.empty()) e["args"] = args;
    ev.push_back(e);
  };
  auto flow = [&](char ph, int id, json p, json t, double ts) {
    json e = {{"ph", std::string(1, ph)}, {"id", id}, {"pid", p}, {"tid", t}, {"ts", ts},
              {"cat", "ac2g"}, {"name", "ac2g"}};
    if (ph == 'f') e["bp"] = "e";
    ev.push_back(e);
  };
  int corr = 100, ext = 1;
  double first_gpu_ts = 0;  // the step's first device work
  // launch: a host call at ts whose kernels run one after the other from gpu_ts (the stream's
  // next free time), and never before 5 us after the call.
  auto launch = [&](const char* cat, const char* call, double ts,
                    const std::vector<std::pair<std::string, double>>& kernels, double gpu_ts) {
    const int c = ++corr;
    gpu_ts = std::max(gpu_ts, ts + 5.0);
    if (first_gpu_ts == 0) first_gpu_ts = gpu_ts;
    x(cat, call, pid, tid, ts, 4.25, {{"External id", ext}, {"cbid", 211}, {"correlation", c}});
    flow('s', c, pid, tid, ts);
    for (const auto& [name, dur] : kernels) {
      x("kernel", name, gpu, stream, gpu_ts, dur,
        {{"External id", ext}, {"queued", 0}, {"device", gpu}, {"context", 1},
         {"stream", stream}, {"correlation", c}, {"registers per thread", 90},
         {"shared memory", 0}, {"grid", {128, 1, 1}}, {"block", {128, 1, 1}}});
      flow('f', c, gpu, stream, gpu_ts);
      gpu_ts += dur + 1.0;
    }
    return gpu_ts;
  };
  for (int step = 0; step < 2; ++step) {
    const double base = 1000.125 + step * 3000.0;
    double t = base + 10.0, g = base + 40.0;
    x("user_annotation", "decode_step", pid, tid, base, 2500.0, {{"External id", ext++}});
    first_gpu_ts = 0;
    for (const auto& k : kineto_decode_kernels(step)) {
      std::vector<std::pair<std::string, double>> ks = {{k.kernel, k.dur_us}};
      if (k.range == "q_proj" && step == 0) continue;  // below, with its two kernels
      x("user_annotation", k.range, pid, tid, t, 60.0, {{"External id", ext++}});
      x("cpu_op", "aten::linear", pid, tid, t + 2.0, 50.0,
        {{"External id", ext}, {"Record function id", 0}, {"Sequence number", 7},
         {"Input Dims", {{1, 1, 4096}, {4096, 4096}, json::array()}},
         {"Input type", {"c10::Half", "c10::Half", ""}}});
      x("cpu_op", "aten::mm", pid, tid, t + 10.0, 40.0, {{"External id", ext}});
      g = launch("cuda_runtime", "cudaLaunchKernel", t + 20.0, ks, g);
      ++ext;
      t += 100.0;
    }
    if (step == 0) {  // q_proj: a split-K GEMM and its reduction, two launches in one range
      const auto k = kineto_decode_kernels(0);
      x("user_annotation", "q_proj", pid, tid, t, 80.0, {{"External id", ext++}});
      x("cpu_op", "aten::mm", pid, tid, t + 5.0, 60.0, {{"External id", ext}});
      g = launch("cuda_runtime", "cudaLaunchKernel", t + 10.0, {{k[0].kernel, k[0].dur_us}}, g);
      g = launch("cuda_runtime", "cudaLaunchKernel", t + 30.0, {{k[1].kernel, k[1].dur_us}}, g);
      ++ext;
      t += 100.0;
    }
    // Outside every module range: an elementwise add, a Triton kernel through the driver API, a
    // CUDA graph of three kernels, the token copy and the synchronisation it implies.
    x("cpu_op", "aten::add", pid, tid, t, 20.0, {{"External id", ext}});
    g = launch("cuda_runtime", "cudaLaunchKernel", t + 5.0, {{"elementwise_kernel", 2.5}}, g);
    ++ext;
    g = launch("cuda_driver", "cuLaunchKernel", t + 40.0, {{"triton_poi_fused_add_0", 3.0}}, g);
    g = launch("cuda_runtime", "cudaGraphLaunch", t + 80.0,
               {{"triton_red_fused_0", 2.0}, {"triton_per_fused_1", 2.25}, {"gemvx_kernel", 5.5}},
               g);
    const int c = ++corr;
    x("cuda_runtime", "cudaMemcpyAsync", pid, tid, t + 120.0, 6.0, {{"correlation", c}});
    flow('s', c, pid, tid, t + 120.0);
    g = std::max(g, t + 125.0);
    x("gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", gpu, stream, g, 1.5,
      {{"device", gpu}, {"context", 1}, {"stream", stream}, {"correlation", c}, {"bytes", 8},
       {"memory bandwidth (GB/s)", 0.005}});
    flow('f', c, gpu, stream, g);
    x("cuda_runtime", "cudaStreamSynchronize", pid, tid, t + 127.0, 20.0, {{"correlation", ++corr}});
    x("gpu_user_annotation", "decode_step", gpu, stream, first_gpu_ts - 0.001,
      g + 1.5 - first_gpu_ts + 0.002, {{"External id", 1}});
  }
  ev.push_back({{"ph", "X"}, {"cat", "Trace"}, {"ts", 990.0}, {"dur", 7000.0}, {"pid", "Spans"},
                {"tid", "PyTorch Profiler"}, {"name", "PyTorch Profiler (0)"},
                {"args", {{"Op count", 0}}}});
  ev.push_back({{"name", "Iteration Start: PyTorch Profiler"}, {"ph", "i"}, {"s", "g"},
                {"pid", "Traces"}, {"tid", "Trace PyTorch Profiler"}, {"ts", 990.0}});
  ev.push_back({{"name", "Record Window End"}, {"ph", "i"}, {"s", "g"}, {"pid", ""}, {"tid", ""},
                {"ts", 7990.5}});
  return {{"schemaVersion", 1},
          {"deviceProperties",
           {{{"id", 0}, {"name", "NVIDIA H200"}, {"totalGlobalMem", 150754820096LL},
             {"computeMajor", 9}, {"computeMinor", 0}, {"numSms", 132}}}},
          {"cupti_version", 26},
          {"cuda_runtime_version", 13000},
          {"record_shapes", 1},
          {"cuda_driver_version", 13000},
          {"trace_id", "0123456789ABCDEF"},
          {"displayTimeUnit", "ms"},
          {"baseTimeNanoseconds", 1764100000000000000LL},
          {"traceEvents", ev},
          {"traceName", "/tmp/out/torch_eager_decode.json"}};
}

}  // namespace llmbench_test
