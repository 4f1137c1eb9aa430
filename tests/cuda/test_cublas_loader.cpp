// cuBLAS loaded on first use (kernels/cuda/cublas_loader.h), checked without a device: nothing
// is mapped before the first call; the first call maps libcublas and resolves every forwarded
// entry point; a forwarded call reaches the real library; a library that cannot be loaded is one
// error naming each path tried and the loader's reason.
#include <gtest/gtest.h>

#include <cublas_v2.h>

#include <fstream>
#include <sstream>
#include <string>

#include "kernels/common/error.h"
#include "kernels/cuda/cublas_loader.h"

namespace llmbench::cuda {
namespace {

// This process's memory map (/proc/self/maps) as text.
std::string self_maps() {
  std::ifstream in("/proc/self/maps");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(CublasLoader, NothingIsMappedBeforeTheFirstCall) {
  if (cublas_loaded()) GTEST_SKIP() << "an earlier test in this process loaded cuBLAS";
  EXPECT_EQ(self_maps().find("libcublas"), std::string::npos);
}

TEST(CublasLoader, TheFirstCallMapsTheLibraryAndResolvesEveryEntryPoint) {
  load_cublas();
  EXPECT_TRUE(cublas_loaded());
  EXPECT_NE(self_maps().find("libcublas.so." + std::to_string(CUBLAS_VER_MAJOR)),
            std::string::npos);
  EXPECT_EQ(cublas_entry_points().size(), 9u);
  load_cublas();  // a second call loads nothing more and does not throw
}

TEST(CublasLoader, AForwardedCallReachesTheLibrary) {
  // Without a device cuBLAS answers with a status of its own rather than a handle; with one, the
  // handle is real. Either way the answer came from libcublas through the forwarding function.
  cublasHandle_t handle = nullptr;
  const cublasStatus_t status = cublasCreate(&handle);
  EXPECT_TRUE(cublas_loaded());
  if (status == CUBLAS_STATUS_SUCCESS) {
    ASSERT_NE(handle, nullptr);
    EXPECT_EQ(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(cublasDestroy(handle), CUBLAS_STATUS_SUCCESS);
  } else {
    EXPECT_EQ(status, CUBLAS_STATUS_NOT_INITIALIZED);
  }
}

TEST(CublasLoader, ALibraryThatCannotBeLoadedIsOneErrorNamingEachPathTried) {
  try {
    open_first_library({"/nonexistent/libcublas.so.99", "libllmbench-no-such-library.so.1"},
                       "cuBLAS, which the CUDA backend needs");
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cannot load cuBLAS, which the CUDA backend needs: "), std::string::npos)
        << what;
    EXPECT_NE(what.find("/nonexistent/libcublas.so.99"), std::string::npos) << what;
    EXPECT_NE(what.find("libllmbench-no-such-library.so.1"), std::string::npos) << what;
    EXPECT_NE(what.find("LD_LIBRARY_PATH"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace llmbench::cuda
