// Whole-file reading and writing with optional gzip (see file_io.h).
#include "tools/file_io.h"

#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kernels/common/error.h"

namespace llmbench {

namespace {

std::string gunzip(const std::string& path, const std::string& what) {
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

std::string read_maybe_gzip(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw BadInput(what + " '" + path + "' does not exist");
  if (std::filesystem::is_directory(path, ec))
    throw BadInput(what + " '" + path + "' is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw BadInput(what + " '" + path + "' cannot be read");
  unsigned char magic[2] = {0, 0};
  in.read(reinterpret_cast<char*>(magic), 2);
  if (in.gcount() == 2 && magic[0] == 0x1f && magic[1] == 0x8b) return gunzip(path, what);
  in.clear();
  in.seekg(0);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool has_gz_suffix(const std::string& path) {
  return path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
}

void write_file_atomically(const std::string& path, const std::string& data, bool gzip) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw BadInput("-o: directory '" + dir.string() + "' does not exist");
  const std::string tmp = path + ".tmp";
  bool ok = false;
  if (gzip) {
    gzFile f = gzopen(tmp.c_str(), "wb6");
    if (f) {
      ok = data.empty() || gzwrite(f, data.data(), unsigned(data.size())) == int(data.size());
      ok = gzclose(f) == Z_OK && ok;
    }
  } else {
    std::ofstream out(tmp, std::ios::binary);
    out.write(data.data(), std::streamsize(data.size()));
    out.close();
    ok = bool(out);
  }
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    fs::remove(tmp, ec);
    throw BadInput("-o: cannot write '" + path + "'");
  }
}

}  // namespace llmbench
