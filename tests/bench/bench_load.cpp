// How fast `llmbench load`'s client goes: one level against a scripted server that answers at
// once (tests/load/scripted_server.h, in this process, on the same cores), reporting requests/s,
// chunks/s and the timestamp error (each chunk's arrival stamp minus the steady_clock time the
// server wrote it, carried in the chunk). Not run by ctest; docs/serving.md quotes its output.
//   build/tests/bench_load [--concurrency 32 | --rate 1000] [--requests 5000] [--tokens 50]
//                          [--server-threads 64]
// BENCH_LOAD_DEBUG=1 also lists the requests whose first byte took over 5 ms (how the 1 s SYN
// retries of a full listen backlog were found).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <sys/resource.h>
#include <vector>

#include "tests/load/scripted_server.h"
#include "tools/load/load_client.h"
#include "tools/load/load_driver.h"
#include "tools/load/load_plan.h"

using namespace llmbench;

namespace {

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double pct(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double rank = p / 100 * double(v.size() - 1);
  const std::size_t lo = std::size_t(rank);
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (rank - double(lo)) * (v[hi] - v[lo]);
}

}  // namespace

int main(int argc, char** argv) {
  int concurrency = 32, requests = 5000, tokens = 50, server_threads = 64;
  double rate = 0;  // > 0: a rate level (Poisson arrivals) instead of a concurrency level
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const int v = std::atoi(argv[i + 1]);
    if (k == "--concurrency") concurrency = v;
    else if (k == "--requests") requests = v;
    else if (k == "--tokens") tokens = v;
    else if (k == "--server-threads") server_threads = v;
    else if (k == "--rate") rate = std::atof(argv[i + 1]);
    else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  test::Script s;
  s.tokens = tokens;
  test::ScriptedServer server(s, rate > 0 ? server_threads : std::max(server_threads, concurrency + 4));
  ClientOptions o;
  o.url = server.url() + "/v1/completions";
  o.keep_events = true;
  LoadClient client(o);
  LevelDrive d;
  d.max_requests = requests;
  if (rate > 0) d.arrival_s = arrival_offsets_s(requests, rate, 1.0, 1);
  else d.concurrency = concurrency;
  d.make_body = [](int, RequestRecord& rec) {
    rec.input_len = 16;
    rec.max_tokens = 50;
    static const std::vector<std::int32_t> ids(16, 20);
    return request_body("scripted", false, true, ids, 50, true, true);
  };
  // The client loop runs on this thread: its CPU time is the client's cost.
  const double cpu0 = cpu_seconds();
  const LevelOutcome out = client.run(d);
  const double cpu_loop = cpu_seconds() - cpu0;
  const std::int64_t origin =
      std::chrono::duration_cast<std::chrono::nanoseconds>(out.origin.time_since_epoch()).count();
  std::int64_t first = INT64_MAX, last = 0;
  long chunks = 0;
  int ok = 0;
  std::vector<double> err_ms;
  for (const RequestRecord& r : out.requests) {
    first = std::min(first, r.send_ns);
    last = std::max(last, r.end_ns);
    ok += r.ok;
    chunks += long(r.chunks.size());
    for (const SseEvent& e : r.events) {
      const auto j = nlohmann::json::parse(e.data, nullptr, false);
      if (j.is_object() && j.contains("t_ns"))
        err_ms.push_back(double(origin + e.arrival_ns - j["t_ns"].get<std::int64_t>()) / 1e6);
    }
  }
  const double wall = double(last - first) / 1e9;
  if (std::getenv("BENCH_LOAD_DEBUG"))
    for (const RequestRecord& r : out.requests)
      if (r.first_byte_ns - r.send_ns > 5000000)
        std::printf("%d send %.3f first byte %.3f first token %.3f end %.3f\n", r.index,
                    r.send_ns / 1e6, r.first_byte_ns / 1e6, r.first_token_ns / 1e6, r.end_ns / 1e6);
  if (rate > 0) std::printf("rate %.0f/s (Poisson), ", rate);
  else std::printf("concurrency %d, ", concurrency);
  std::printf("%d requests of %d tokens: %d ok in %.3f s\n", requests,
              tokens, ok, wall);
  std::printf("  %.0f requests/s, %.0f chunks/s; client loop CPU %.2f s (%.0f%% of one core)\n",
              ok / wall, double(chunks) / wall, cpu_loop, 100 * cpu_loop / wall);
  std::printf("  timestamp error (arrival stamp - server write), ms: p50 %.3f  p90 %.3f  p99 %.3f  "
              "max %.3f  (%zu chunks)\n",
              pct(err_ms, 50), pct(err_ms, 90), pct(err_ms, 99), pct(err_ms, 100), err_ms.size());
  return ok == requests ? 0 : 1;
}
