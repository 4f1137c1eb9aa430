// Whole-file reading and writing for importers and exporters: reads a file that may be
// gzip-compressed (recognised by its magic bytes, not its name), and writes a file atomically
// (engine/checkpoint/atomic_file.h), gzip-compressed when asked. Errors are BadInput
// naming the file. Not a streaming API: traces are read and written whole.
#pragma once
#include <cstddef>
#include <string>

namespace llmbench {

// The default bound on what a gzip file may inflate to (a 1.5 MB file inflated to 1.5 GB and
// took 3.8 GB of memory before the parse refused it).
constexpr std::size_t kMaxDecompressedBytes = std::size_t(1) << 30;

// The file's bytes, decompressed when it starts with the gzip magic. `what` names the input in
// messages ("chrome trace"). Throws BadInput when the file is missing, unreadable, a corrupt or
// truncated gzip stream, or inflates to more than `max_decompressed_bytes` (checked as it
// inflates: never more than that is held).
std::string read_maybe_gzip(const std::string& path, const std::string& what,
                            std::size_t max_decompressed_bytes = kMaxDecompressedBytes);

// True when `path` ends in ".gz".
bool has_gz_suffix(const std::string& path);

// Writes `data` to `path` (gzip-compressed when `gzip`) atomically (engine/checkpoint/atomic_file.h), so a
// failure never leaves a half-written file. Throws BadInput when the directory is missing or
// not writable.
void write_output_file(const std::string& path, const std::string& data, bool gzip);

}  // namespace llmbench
