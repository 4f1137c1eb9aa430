// NVML, the NVIDIA driver's management library, loaded at run time (dlopen) for the board's
// energy counter and power limit (docs/metrics.md, "Energy per phase"). It is never linked at
// build time: the binary runs where the driver is absent, and then NVML is "unavailable" with a
// one-line note saying why. LLMBENCH_NVML_LIBRARY names another library to load instead (the
// tests' fake NVML, tests/engine/fake_nvml.cpp).
// Deliberately not: a general NVML wrapper (clocks, temperatures, utilisation); only what energy
// per phase needs.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "engine/bench/energy.h"

namespace llmbench {

// The environment variable naming the NVML library to load (default kNvmlLibrary).
inline constexpr const char* kNvmlLibraryEnv = "LLMBENCH_NVML_LIBRARY";
inline constexpr const char* kNvmlLibrary = "libnvidia-ml.so.1";

class Nvml {
 public:
  // Loads `library` ("": $LLMBENCH_NVML_LIBRARY, else libnvidia-ml.so.1), initialises NVML and
  // picks the device whose PCI bus id is `pci_bus_id` ("": device index 0), then reads its
  // energy counter once. Never throws: a missing library, a missing symbol or an NVML error
  // (a board before Volta has no energy counter) leaves it unavailable, with note() saying why.
  explicit Nvml(const std::string& pci_bus_id, const std::string& library = "");
  ~Nvml();  // nvmlShutdown and dlclose when it was loaded
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  bool available() const { return device_ != nullptr; }
  // Why it is unavailable ("NVML unavailable: libnvidia-ml.so.1 not found (...)"); "" when
  // available.
  const std::string& note() const { return note_; }
  // The library that was loaded or tried.
  const std::string& library() const { return library_; }

  // The board's total energy since the driver was loaded, millijoules
  // (nvmlDeviceGetTotalEnergyConsumption); nullopt when unavailable or the call failed.
  std::optional<std::uint64_t> energy_mj() const;
  // The power limit the board enforces, watts (nvmlDeviceGetEnforcedPowerLimit, else
  // nvmlDeviceGetPowerManagementLimit); nullopt when neither answers.
  std::optional<double> power_limit_w() const;
  // A meter over this device's counter (which must outlive it).
  EnergyMeter meter() const;

 private:
  void unavailable(const std::string& why);

  std::string library_, note_;
  void* handle_ = nullptr;  // dlopen's
  bool initialised_ = false;
  void* device_ = nullptr;  // nvmlDevice_t
  // The entry points, resolved by dlsym.
  int (*shutdown_)() = nullptr;
  int (*energy_)(void*, unsigned long long*) = nullptr;
  int (*enforced_limit_)(void*, unsigned int*) = nullptr;
  int (*management_limit_)(void*, unsigned int*) = nullptr;
  const char* (*error_string_)(int) = nullptr;
};

// The PCI bus id ("0000:3b:00.0") of the CUDA device in use, for Nvml's constructor; "" in a
// build without CUDA or when the runtime cannot say (NVML then takes device index 0).
std::string current_cuda_pci_bus_id();

}  // namespace llmbench
