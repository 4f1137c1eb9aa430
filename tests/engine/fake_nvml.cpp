// A fake NVML for the energy tests: a shared library exporting the entry points
// engine/bench/nvml.cpp resolves, with a scripted energy counter, loaded through
// LLMBENCH_NVML_LIBRARY so the loader, the per-phase accounting, the store and the printers run
// without a GPU. Its script comes from the environment, read at each call:
//   LLMBENCH_FAKE_NVML_MJ_PER_READ=K  the counter advances K mJ at every read (exact arithmetic)
//   otherwise a board drawing LLMBENCH_FAKE_NVML_WATTS (default 200) whose counter advances
//   every LLMBENCH_FAKE_NVML_UPDATE_MS (default 2) by the energy of that interval
//   LLMBENCH_FAKE_NVML_LIMIT_W   the enforced power limit (default 300)
//   LLMBENCH_FAKE_NVML_FAIL      init | handle | energy: that call fails (energy: every read
//                                after the first, which the loader takes at start)
// Built twice (tests/CMakeLists.txt): as is, and with FAKE_NVML_NO_ENERGY, without
// nvmlDeviceGetTotalEnergyConsumption (a driver too old for the counter).
// Not a model of any board's counter beyond that.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

struct Device {
  int id = 0;
};
Device g_device;
std::string g_bus_id;
unsigned long long g_reads = 0;
double g_mj = 0;                 // time-based mode: the counter at the last update
std::int64_t g_next_update_ns = 0;

double env_number(const char* name, double fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atof(v) : fallback;
}

bool fails(const char* what) {
  const char* v = std::getenv("LLMBENCH_FAKE_NVML_FAIL");
  return v && std::strcmp(v, what) == 0;
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

constexpr int kSuccess = 0, kUninitialized = 1, kNotSupported = 3, kNotFound = 6, kUnknown = 999;

}  // namespace

extern "C" {

int nvmlInit_v2() { return fails("init") ? kUninitialized : kSuccess; }
int nvmlShutdown() { return kSuccess; }

const char* nvmlErrorString(int rc) {
  switch (rc) {
    case kUninitialized: return "Uninitialized";
    case kNotSupported: return "Not Supported";
    case kNotFound: return "Not Found";
    default: return "Unknown Error";
  }
}

int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** device) {
  if (fails("handle") || index != 0) return kNotFound;
  *device = &g_device;
  return kSuccess;
}

int nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, void** device) {
  if (fails("handle")) return kNotFound;
  g_bus_id = bus_id;
  *device = &g_device;
  return kSuccess;
}

#if !defined(FAKE_NVML_NO_ENERGY)
int nvmlDeviceGetTotalEnergyConsumption(void* device, unsigned long long* mj) {
  if (device != &g_device) return kUnknown;
  if (fails("energy") && g_reads > 0) return kUnknown;
  ++g_reads;
  if (const double step = env_number("LLMBENCH_FAKE_NVML_MJ_PER_READ", 0); step > 0) {
    *mj = (unsigned long long)(step * double(g_reads));
    return kSuccess;
  }
  const double watts = env_number("LLMBENCH_FAKE_NVML_WATTS", 200);
  const std::int64_t period = std::int64_t(env_number("LLMBENCH_FAKE_NVML_UPDATE_MS", 2) * 1e6);
  const std::int64_t now = now_ns();
  if (g_next_update_ns == 0) g_next_update_ns = now + period;
  // Every update boundary passed since the last read adds one interval's energy.
  while (now >= g_next_update_ns) {
    g_mj += watts * double(period) / 1e6;  // W x ns / 1e6 = mJ
    g_next_update_ns += period;
  }
  *mj = (unsigned long long)g_mj;
  return kSuccess;
}
#endif

int nvmlDeviceGetEnforcedPowerLimit(void* device, unsigned* mw) {
  if (device != &g_device) return kUnknown;
  *mw = unsigned(env_number("LLMBENCH_FAKE_NVML_LIMIT_W", 300) * 1000);
  return kSuccess;
}

int nvmlDeviceGetPowerManagementLimit(void* device, unsigned* mw) {
  return nvmlDeviceGetEnforcedPowerLimit(device, mw);
}

// For the tests (not NVML's): the bus id the loader asked for, and a counter reset.
const char* fake_nvml_bus_id() { return g_bus_id.c_str(); }
void fake_nvml_reset() {
  g_reads = 0;
  g_mj = 0;
  g_next_update_ns = 0;
}

}  // extern "C"
