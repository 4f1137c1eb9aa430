// Whole-file reading and writing with optional gzip (see file_io.h).
#include "tools/trace_io/file_io.h"

#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/checkpoint/atomic_file.h"
#include "engine/checkpoint/input_file.h"
#include "kernels/common/error.h"

namespace llmbench {

namespace {

std::string gunzip(const std::string& path, const std::string& what, std::size_t max_bytes) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw BadInput(what + " '" + path + "': cannot open");
  std::string out;
  char buf[1 << 16];
  for (;;) {
    const int n = gzread(f, buf, sizeof buf);
    if (n < 0) {
      int errnum = 0;
      const std::string msg = gzerror(f, &errnum);
      gzclose(f);
      throw BadInput(what + " '" + path + "': corrupt gzip data (" + msg + ")");
    }
    if (n == 0) break;
    if (out.size() + std::size_t(n) > max_bytes) {
      gzclose(f);
      throw BadInput(what + " '" + path + "': inflates to more than " +
                     std::to_string(max_bytes >> 20) + " MB (--max-decompressed-mb)");
    }
    out.append(buf, std::size_t(n));
  }
  // gzread returns 0 at a truncated end too; gzclose_r reports it as Z_BUF_ERROR.
  const int rc = gzclose_r(f);
  if (rc != Z_OK)
    throw BadInput(what + " '" + path + "': truncated or corrupt gzip data (zlib error " +
                   std::to_string(rc) + ")");
  return out;
}

}  // namespace

std::string read_maybe_gzip(const std::string& path, const std::string& what,
                            std::size_t max_decompressed_bytes) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw BadInput(what + " '" + path + "' does not exist");
  if (std::filesystem::is_directory(path, ec))
    throw BadInput(what + " '" + path + "' is a directory");
  refuse_special_file(path, what);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw BadInput(what + " '" + path + "' cannot be read");
  unsigned char magic[2] = {0, 0};
  in.read(reinterpret_cast<char*>(magic), 2);
  if (in.gcount() == 2 && magic[0] == 0x1f && magic[1] == 0x8b) return gunzip(path, what, max_decompressed_bytes);
  in.clear();
  in.seekg(0);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool has_gz_suffix(const std::string& path) {
  return path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
}

void write_output_file(const std::string& path, const std::string& data, bool gzip) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw BadInput("-o: directory '" + dir.string() + "' does not exist");
  if (!gzip) return write_file_atomically(path, data, "-o");
  if (data.size() > 0xFFFFFFFFu) throw BadInput("-o: '" + path + "': over 4 GiB; write it without .gz");
  // gzip in memory, then the same atomic write.
  z_stream z{};
  if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw Error("-o: zlib deflateInit2 failed");
  std::string out(deflateBound(&z, uLong(data.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = uInt(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = uInt(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw Error("-o: gzip compression of '" + path + "' failed");
  write_file_atomically(path, out, "-o");
}

}  // namespace llmbench
