// The machine's load now (see machine_load.h), from /proc.
#include "tools/run/machine_load.h"

#include <fmt/core.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace llmbench {

std::string MachineLoad::describe() const {
  return fmt::format("load {:.2f} on {} CPU{}, {} other llmbench process{}", load_avg_1m, cpus,
                     cpus == 1 ? "" : "s", other_llmbench, other_llmbench == 1 ? "" : "es");
}

MachineLoad current_machine_load() {
  MachineLoad l;
  if (std::ifstream in("/proc/loadavg"); in) in >> l.load_avg_1m;
  if (const long n = sysconf(_SC_NPROCESSORS_ONLN); n > 0) l.cpus = int(n);
  const std::string self = std::to_string(getpid());
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc", ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string pid = it->path().filename().string();
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos || pid == self)
      continue;
    std::ifstream comm(it->path() / "comm");
    std::string name;
    if (comm && std::getline(comm, name) && name == "llmbench") ++l.other_llmbench;
  }
  return l;
}

}  // namespace llmbench
