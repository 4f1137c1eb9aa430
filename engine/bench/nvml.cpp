// The NVML loader (see nvml.h). The signatures are NVML's documented C API (nvml.h of the
// driver); its header is not needed: every type crossing it is an int, an unsigned integer, a
// char pointer or the opaque device handle.
#include "engine/bench/nvml.h"

#include <dlfcn.h>

#include <cstdlib>

#if defined(LLMBENCH_HAVE_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace llmbench {

namespace {

constexpr int kNvmlSuccess = 0;

template <class Fn>
Fn symbol(void* handle, const char* name) {
  return reinterpret_cast<Fn>(dlsym(handle, name));
}

}  // namespace

Nvml::Nvml(const std::string& pci_bus_id, const std::string& library) : library_(library) {
  if (library_.empty()) {
    const char* env = std::getenv(kNvmlLibraryEnv);
    library_ = env && *env ? env : kNvmlLibrary;
  }
  handle_ = dlopen(library_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char* why = dlerror();
    unavailable(library_ + " not found (" + (why ? why : "dlopen failed") + ")");
    return;
  }
  error_string_ = symbol<const char* (*)(int)>(handle_, "nvmlErrorString");
  auto init = symbol<int (*)()>(handle_, "nvmlInit_v2");
  shutdown_ = symbol<int (*)()>(handle_, "nvmlShutdown");
  auto by_index = symbol<int (*)(unsigned, void**)>(handle_, "nvmlDeviceGetHandleByIndex_v2");
  auto by_bus = symbol<int (*)(const char*, void**)>(handle_, "nvmlDeviceGetHandleByPciBusId_v2");
  energy_ = symbol<int (*)(void*, unsigned long long*)>(handle_,
                                                        "nvmlDeviceGetTotalEnergyConsumption");
  enforced_limit_ = symbol<int (*)(void*, unsigned*)>(handle_, "nvmlDeviceGetEnforcedPowerLimit");
  management_limit_ =
      symbol<int (*)(void*, unsigned*)>(handle_, "nvmlDeviceGetPowerManagementLimit");
  for (const auto& [fn, name] :
       {std::pair<bool, const char*>{init != nullptr, "nvmlInit_v2"},
        {shutdown_ != nullptr, "nvmlShutdown"},
        {(pci_bus_id.empty() ? by_index != nullptr : by_bus != nullptr),
         pci_bus_id.empty() ? "nvmlDeviceGetHandleByIndex_v2" : "nvmlDeviceGetHandleByPciBusId_v2"},
        {energy_ != nullptr, "nvmlDeviceGetTotalEnergyConsumption"}}) {
    if (!fn) {
      unavailable(library_ + " has no " + name);
      return;
    }
  }
  auto failed = [&](const char* call, int rc) {
    unavailable(std::string(call) + " failed: " +
                (error_string_ ? error_string_(rc) : "error " + std::to_string(rc)));
  };
  if (const int rc = init(); rc != kNvmlSuccess) {
    failed("nvmlInit_v2", rc);
    return;
  }
  initialised_ = true;
  void* device = nullptr;
  if (pci_bus_id.empty()) {
    if (const int rc = by_index(0, &device); rc != kNvmlSuccess) {
      failed("nvmlDeviceGetHandleByIndex_v2(0)", rc);
      return;
    }
  } else if (const int rc = by_bus(pci_bus_id.c_str(), &device); rc != kNvmlSuccess) {
    failed(("nvmlDeviceGetHandleByPciBusId_v2(" + pci_bus_id + ")").c_str(), rc);
    return;
  }
  // A board without the counter (before Volta) answers NOT_SUPPORTED here, once.
  unsigned long long mj = 0;
  if (const int rc = energy_(device, &mj); rc != kNvmlSuccess) {
    failed("nvmlDeviceGetTotalEnergyConsumption", rc);
    return;
  }
  device_ = device;
}

Nvml::~Nvml() {
  if (initialised_ && shutdown_) shutdown_();
  if (handle_) dlclose(handle_);
}

void Nvml::unavailable(const std::string& why) {
  device_ = nullptr;
  note_ = "NVML unavailable: " + why;
}

std::optional<std::uint64_t> Nvml::energy_mj() const {
  if (!device_) return std::nullopt;
  unsigned long long mj = 0;
  if (energy_(device_, &mj) != kNvmlSuccess) return std::nullopt;
  return std::uint64_t(mj);
}

std::optional<double> Nvml::power_limit_w() const {
  if (!device_) return std::nullopt;
  unsigned mw = 0;
  if (enforced_limit_ && enforced_limit_(device_, &mw) == kNvmlSuccess) return mw / 1000.0;
  if (management_limit_ && management_limit_(device_, &mw) == kNvmlSuccess) return mw / 1000.0;
  return std::nullopt;
}

EnergyMeter Nvml::meter() const {
  return EnergyMeter([this] { return energy_mj(); }, power_limit_w());
}

std::string current_cuda_pci_bus_id() {
#if defined(LLMBENCH_HAVE_CUDA)
  int device = 0;
  char id[32] = {};
  if (cudaGetDevice(&device) != cudaSuccess) return "";
  if (cudaDeviceGetPCIBusId(id, int(sizeof id), device) != cudaSuccess) return "";
  return id;
#else
  return "";
#endif
}

}  // namespace llmbench
