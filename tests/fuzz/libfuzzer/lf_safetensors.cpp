// Coverage-guided fuzzing of the safetensors reader (engine/checkpoint/safetensors.h) on a
// damaged or hostile checkpoint file: every file opens with validated entries whose bytes lie
// inside it, or fails with BadInput; never a crash, a read outside the mapping or another
// exception. The fuzzer's bytes are the whole file. scripts/libfuzzer.sh builds and runs it.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "engine/checkpoint/safetensors.h"
#include "kernels/common/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // One file per fuzzing process, removed after each input (an open file keeps its mapping).
  static const std::string path = "/tmp/llmbench_lf_safetensors_" + std::to_string(getpid());
  struct Remove {
    ~Remove() { std::remove(path.c_str()); }
  } remove;
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data), std::streamsize(size));
  }
  try {
    const llmbench::SafetensorsFile file(path);
    for (const auto& t : file.tensors()) {
      if (t.end < t.begin || t.end - t.begin > size) std::abort();
      if (file.bytes(t).size() != t.end - t.begin) std::abort();
      if (t.numel() > (1 << 16)) continue;  // the read is what matters, not its size
      std::vector<float> out(std::size_t(t.numel()) + 1);
      file.read_f32(t, out.data());
    }
  } catch (const llmbench::BadInput&) {
  }
  return 0;
}
