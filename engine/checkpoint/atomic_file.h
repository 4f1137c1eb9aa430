// A file written whole or not at all: bytes go to PATH.tmp beside the target, and commit()
// renames it into place, so a reader (or a later run) never sees half a file and a failure
// leaves nothing behind. The one implementation of "write to a temporary, then rename" that
// checkpoints, exports and caches use. Not a streaming reader, not a lock: two writers of one
// path race, and the last rename wins.
#pragma once
#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>

namespace llmbench {

class AtomicFile {
 public:
  // Creates PATH.tmp. `who` prefixes error messages ("-o", "safetensors"). Throws BadInput
  // naming the path when the directory is missing or not writable.
  AtomicFile(std::string path, std::string who);
  // Removes the temporary unless commit() succeeded.
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Appends bytes; throws BadInput (disk full, I/O error) naming the path.
  void write(const void* data, std::size_t bytes);
  void write(std::string_view text) { write(text.data(), text.size()); }
  // Flushes, closes and renames the temporary over PATH.
  void commit();

  const std::string& temp_path() const { return tmp_; }

 private:
  [[noreturn]] void fail(const char* what) const;

  std::string path_, tmp_, who_;
  std::FILE* file_ = nullptr;
  bool committed_ = false;
};

// AtomicFile in one call.
void write_file_atomically(const std::string& path, std::string_view data, const std::string& who);

}  // namespace llmbench
