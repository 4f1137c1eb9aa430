// Whole-file reading and writing for importers and exporters: reads a file that may be
// gzip-compressed (recognised by its magic bytes, not its name), and writes a file atomically
// (engine/checkpoint/atomic_file.h), gzip-compressed when asked. Errors are BadInput
// naming the file. Not a streaming API: traces are read and written whole.
#pragma once
#include <string>

namespace llmbench {

// The file's bytes, decompressed when it starts with the gzip magic. `what` names the input in
// messages ("chrome trace"). Throws BadInput when the file is missing, unreadable, or a
// corrupt or truncated gzip stream.
std::string read_maybe_gzip(const std::string& path, const std::string& what);

// True when `path` ends in ".gz".
bool has_gz_suffix(const std::string& path);

// Writes `data` to `path` (gzip-compressed when `gzip`) atomically (engine/checkpoint/atomic_file.h), so a
// failure never leaves a half-written file. Throws BadInput when the directory is missing or
// not writable.
void write_output_file(const std::string& path, const std::string& data, bool gzip);

}  // namespace llmbench
