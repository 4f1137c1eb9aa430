// Inputs that must be regular files: a FIFO, socket or device where a checkpoint, trace,
// database or query file is expected is refused before anything opens it (opening a FIFO for
// reading blocks until a writer appears, so `run` used to hang forever on one). Not a reader:
// callers open the file themselves once it has passed.
#pragma once
#include <optional>
#include <string>

namespace llmbench {

// What is at `path` when it exists and is not a regular file ("a FIFO (named pipe)",
// "a directory", "a socket", "a character device", "a block device", "not a regular file");
// nullopt for a regular file (symlinks followed) or nothing at all.
std::optional<std::string> special_file_kind(const std::string& path);

// Throws BadInput "<what> '<path>' is a FIFO (named pipe), not a regular file" (or the kind
// found) when special_file_kind(path) says so. A missing path passes: callers report that
// in their own words.
void refuse_special_file(const std::string& path, const std::string& what);

}  // namespace llmbench
