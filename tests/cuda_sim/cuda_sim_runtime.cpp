// cuda_sim's runtime and cuBLAS calls (cuda_sim_runtime.h).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "tests/cuda_sim/cuda_sim.h"

cudaError_t cudaGetLastError() { return static_cast<cudaError_t>(cuda_sim::take_last_error()); }
cudaError_t cudaPeekAtLastError() {
  return static_cast<cudaError_t>(cuda_sim::peek_last_error());
}

const char* cudaGetErrorName(cudaError_t err) {
  switch (err) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorNotSupported: return "cudaErrorNotSupported";
    case cudaErrorIllegalState: return "cudaErrorIllegalState";
    case cudaErrorStreamCaptureUnsupported: return "cudaErrorStreamCaptureUnsupported";
  }
  return "cudaError<unknown>";
}
const char* cudaGetErrorString(cudaError_t err) { return cudaGetErrorName(err); }

cudaError_t cudaGetDevice(int* device) {
  *device = 0;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceCount(int* count) {
  *count = 1;
  return cudaSuccess;
}

// A stream runs every call before it returns, unless it is capturing a graph.
struct CUgraphNode_st {
  std::size_t index;
};
struct CUgraph_st {
  std::vector<std::function<void()>> work;
  std::vector<std::unique_ptr<CUgraphNode_st>> nodes;  // one per work item
};
struct CUstream_st {
  CUgraph_st* capture = nullptr;
  unsigned long long capture_id = 0;
};
struct CUevent_st {
  std::chrono::steady_clock::time_point at{};
  bool recorded = false;
};
struct CUmemPoolHandle_st {
  unsigned long long release_threshold = 0;
};
struct CUgraphExec_st {
  std::vector<std::function<void()>> work;
};

namespace cuda_sim {
bool capturing(CUstream_st* stream) { return stream != nullptr && stream->capture != nullptr; }
void record(CUstream_st* stream, std::function<void()> work) {
  CUgraph_st& g = *stream->capture;
  g.nodes.push_back(std::make_unique<CUgraphNode_st>(CUgraphNode_st{g.work.size()}));
  g.work.push_back(std::move(work));
}
}  // namespace cuda_sim

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode) {
  static unsigned long long next_id = 0;
  if (stream == nullptr) return cudaErrorStreamCaptureUnsupported;  // the legacy null stream
  if (stream->capture != nullptr) return cudaErrorIllegalState;
  stream->capture = new CUgraph_st;
  stream->capture_id = ++next_id;
  return cudaSuccess;
}
cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* status) {
  *status = cuda_sim::capturing(stream) ? cudaStreamCaptureStatusActive
                                        : cudaStreamCaptureStatusNone;
  return cudaSuccess;
}
cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, cudaStreamCaptureStatus* status,
                                     unsigned long long* id, cudaGraph_t* graph,
                                     const cudaGraphNode_t** deps, const void** edge_data,
                                     std::size_t* num_deps) {
  const bool active = cuda_sim::capturing(stream);
  *status = active ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
  if (id != nullptr) *id = active ? stream->capture_id : 0;
  if (graph != nullptr) *graph = active ? stream->capture : nullptr;
  if (deps != nullptr) *deps = nullptr;
  if (edge_data != nullptr) *edge_data = nullptr;
  if (num_deps != nullptr) *num_deps = 0;
  return cudaSuccess;
}
cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, std::size_t* count) {
  if (graph == nullptr || count == nullptr) return cudaErrorInvalidValue;
  if (nodes == nullptr) {
    *count = graph->nodes.size();
    return cudaSuccess;
  }
  const std::size_t n = std::min(*count, graph->nodes.size());
  for (std::size_t i = 0; i < n; ++i) nodes[i] = graph->nodes[i].get();
  *count = n;
  return cudaSuccess;
}
cudaError_t cudaGraphUpload(cudaGraphExec_t exec, cudaStream_t) {
  return exec == nullptr ? cudaErrorInvalidValue : cudaSuccess;
}
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
  if (stream == nullptr || stream->capture == nullptr) return cudaErrorIllegalState;
  *graph = stream->capture;
  stream->capture = nullptr;
  return cudaSuccess;
}
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long) {
  if (graph == nullptr) return cudaErrorInvalidValue;
  *exec = new CUgraphExec_st{graph->work};
  return cudaSuccess;
}
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  if (exec == nullptr) return cudaErrorInvalidValue;
  if (cuda_sim::capturing(stream)) return cudaErrorStreamCaptureUnsupported;
  for (const auto& work : exec->work) work();
  return cudaSuccess;
}
cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  delete graph;
  return cudaSuccess;
}
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  delete exec;
  return cudaSuccess;
}
cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  *stream = new CUstream_st;
  return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  delete stream;
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned) {
  return cudaStreamCreate(stream);
}
cudaError_t cudaSetDevice(int device) { return device == 0 ? cudaSuccess : cudaErrorInvalidValue; }
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (device != 0) return cudaErrorInvalidValue;
  *prop = cudaDeviceProp{};
  std::snprintf(prop->name, sizeof(prop->name), "cuda_sim (simulated on the CPU)");
  prop->totalGlobalMem = std::size_t{80} << 30;
  prop->multiProcessorCount = cuda_sim::kSimSms;
  prop->memoryBusWidth = 5120;
  prop->major = 9;
  prop->minor = 0;
  return cudaSuccess;
}
cudaError_t cudaRuntimeGetVersion(int* version) {
  *version = 13000;
  return cudaSuccess;
}
cudaError_t cudaDriverGetVersion(int* version) {
  *version = 13000;
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  *event = new CUevent_st;
  return cudaSuccess;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned) {
  return cudaEventCreate(event);
}
cudaError_t cudaEventDestroy(cudaEvent_t event) {
  delete event;
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  if (event == nullptr) return cudaErrorInvalidValue;
  auto stamp = [event] {
    event->at = std::chrono::steady_clock::now();
    event->recorded = true;
  };
  if (cuda_sim::capturing(stream))
    cuda_sim::record(stream, stamp);
  else
    stamp();
  return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  return event == nullptr ? cudaErrorInvalidValue : cudaSuccess;
}
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  if (start == nullptr || end == nullptr || !start->recorded || !end->recorded)
    return cudaErrorInvalidValue;
  *ms = std::chrono::duration<float, std::milli>(end->at - start->at).count();
  return cudaSuccess;
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device) {
  static CUmemPoolHandle_st the_pool;
  if (device != 0) return cudaErrorInvalidValue;
  *pool = &the_pool;
  return cudaSuccess;
}
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value) {
  if (pool == nullptr || attr != cudaMemPoolAttrReleaseThreshold) return cudaErrorInvalidValue;
  pool->release_threshold = *static_cast<unsigned long long*>(value);
  return cudaSuccess;
}
cudaError_t cudaMallocAsync(void** p, std::size_t bytes, cudaStream_t) {
  return cudaMalloc(p, bytes);
}
cudaError_t cudaFreeAsync(void* p, cudaStream_t stream) {
  if (cuda_sim::capturing(stream)) return cudaErrorStreamCaptureUnsupported;
  return cudaFree(p);
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  if (device != 0) return cudaErrorInvalidValue;
  switch (attr) {
    case cudaDevAttrMultiProcessorCount: *value = cuda_sim::kSimSms; return cudaSuccess;
    case cudaDevAttrClockRate: *value = 1980000; return cudaSuccess;         // kHz
    case cudaDevAttrMemoryClockRate: *value = 2619000; return cudaSuccess;   // kHz
    case cudaDevAttrMaxSharedMemoryPerBlock:
      *value = cuda_sim::kSimSharedDefault;
      return cudaSuccess;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin:
      *value = cuda_sim::kSimSharedOptin;
      return cudaSuccess;
  }
  return cudaErrorInvalidValue;
}

cudaError_t cudaMalloc(void** p, std::size_t bytes) {
  // 256-byte aligned, as cudaMalloc's allocations are.
  *p = std::aligned_alloc(256, (bytes + 255) / 256 * 256 + 256);
  return *p == nullptr ? cudaErrorMemoryAllocation : cudaSuccess;
}
cudaError_t cudaFree(void* p) {
  std::free(p);
  return cudaSuccess;
}
cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind) {
  if (bytes != 0) std::memmove(dst, src, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream) {
  if (!cuda_sim::capturing(stream)) return cudaMemcpy(dst, src, bytes, kind);
  cuda_sim::record(stream, [=] { cudaMemcpy(dst, src, bytes, kind); });
  return cudaSuccess;
}
cudaError_t cudaMemset(void* p, int value, std::size_t bytes) {
  if (bytes != 0) std::memset(p, value, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void* p, int value, std::size_t bytes, cudaStream_t stream) {
  if (!cuda_sim::capturing(stream)) return cudaMemset(p, value, bytes);
  cuda_sim::record(stream, [=] { cudaMemset(p, value, bytes); });
  return cudaSuccess;
}
cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }

namespace cuda_sim {
namespace {
std::mutex g_limits_mutex;
std::map<const void*, int>& limits() {
  static std::map<const void*, int> m;
  return m;
}
}  // namespace

cudaError_t set_max_dynamic_shared(const void* kernel, int bytes) {
  if (bytes < 0 || bytes > kSimSharedOptin) return cudaErrorInvalidValue;
  const std::lock_guard<std::mutex> lock(g_limits_mutex);
  limits()[kernel] = bytes;
  return cudaSuccess;
}
int max_dynamic_shared(const void* kernel) {
  const std::lock_guard<std::mutex> lock(g_limits_mutex);
  const auto it = limits().find(kernel);
  return it == limits().end() ? kSimSharedDefault : it->second;
}
}  // namespace cuda_sim

struct cublasContext {
  cudaStream_t stream = nullptr;
  cublasPointerMode_t pointer_mode = CUBLAS_POINTER_MODE_HOST;
};

cublasStatus_t cublasCreate(cublasHandle_t* handle) {
  *handle = new cublasContext;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasDestroy(cublasHandle_t handle) {
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetStream(cublasHandle_t handle, cudaStream_t* stream) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  *stream = handle->stream;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetWorkspace(cublasHandle_t handle, void*, std::size_t) {
  return handle == nullptr ? CUBLAS_STATUS_NOT_INITIALIZED : CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t) {
  return handle == nullptr ? CUBLAS_STATUS_NOT_INITIALIZED : CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetPointerMode(cublasHandle_t handle, cublasPointerMode_t mode) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (mode != CUBLAS_POINTER_MODE_HOST) return CUBLAS_STATUS_NOT_SUPPORTED;
  handle->pointer_mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}

namespace {

// Element i of a matrix stored as `type`, widened to float.
float element(const void* p, cudaDataType_t type, long i) {
  switch (type) {
    case CUDA_R_32F: return static_cast<const float*>(p)[i];
    case CUDA_R_16F: return float(static_cast<const __half*>(p)[i]);
    case CUDA_R_16BF: return float(static_cast<const __nv_bfloat16*>(p)[i]);
  }
  return NAN;
}

// op(X)'s `rows` x `k` elements widened to float, row r's k values contiguous: what a GEMM reads
// of X, each element once (so AddressSanitizer still sees every read of the device matrix).
// `trans`: X is stored k-major (element (r, p) at r * ld + p), else r-major (p * ld + r).
std::vector<float> widen_operand(const void* x, cudaDataType_t type, bool trans, int rows, int k,
                                 int ld) {
  std::vector<float> out(static_cast<std::size_t>(rows) * k);
  for (int r = 0; r < rows; ++r)
    for (int p = 0; p < k; ++p)
      out[static_cast<std::size_t>(r) * k + p] =
          element(x, type, trans ? r * static_cast<long>(ld) + p : p * static_cast<long>(ld) + r);
  return out;
}

// The BLAS GEMM on one matrix triple (column-major), after the argument checks cuBLAS documents:
// sizes non-negative, each leading dimension at least its matrix's stored rows. The operands are
// widened once, then each output is one sum over p in order (the definition's arithmetic).
cublasStatus_t gemm_one(cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                        float alpha, const void* a, cudaDataType_t a_type, int lda, const void* b,
                        cudaDataType_t b_type, int ldb, float beta, float* c, int ldc) {
  const bool ta = transa != CUBLAS_OP_N, tb = transb != CUBLAS_OP_N;
  if (m < 0 || n < 0 || k < 0 || lda < std::max(1, ta ? k : m) ||
      ldb < std::max(1, tb ? n : k) || ldc < std::max(1, m))
    return CUBLAS_STATUS_INVALID_VALUE;
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;  // nothing read, nothing written
  // op(A) row `row` and op(B) column `col` as contiguous k-vectors: A(row, p) is a[row * lda + p]
  // when transposed, else a[p * lda + row]; B(p, col) is b[p * ldb + col] when transposed, else
  // b[col * ldb + p].
  const std::vector<float> a_rows = widen_operand(a, a_type, ta, m, k, lda);
  const std::vector<float> b_cols = widen_operand(b, b_type, !tb, n, k, ldb);
  for (int col = 0; col < n; ++col)
    for (int row = 0; row < m; ++row) {
      const float* av = a_rows.data() + static_cast<std::size_t>(row) * k;
      const float* bv = b_cols.data() + static_cast<std::size_t>(col) * k;
      float acc = 0.0f;
      for (int p = 0; p < k; ++p) acc += av[p] * bv[p];
      float& out = c[col * static_cast<long>(ldc) + row];
      // beta == 0: C is not read (it may hold NaN), as BLAS specifies.
      out = beta == 0.0f ? alpha * acc : alpha * acc + beta * out;
    }
  return CUBLAS_STATUS_SUCCESS;
}

// Runs `gemm` now, or records it when the handle's stream is capturing a graph (cuBLAS's calls
// are captured like any launch; a refusal found at replay is thrown there).
template <class Gemm>
cublasStatus_t on_stream(cublasHandle_t handle, Gemm gemm) {
  if (!cuda_sim::capturing(handle->stream)) return gemm();
  cuda_sim::record(handle->stream, [gemm] {
    if (gemm() != CUBLAS_STATUS_SUCCESS)
      throw std::runtime_error("cuda_sim: a captured cuBLAS call failed when replayed");
  });
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const void* alpha,
                            const void* a, cudaDataType_t a_type, int lda, const void* b,
                            cudaDataType_t b_type, int ldb, const void* beta, void* c,
                            cudaDataType_t c_type, int ldc, cublasComputeType_t compute,
                            cublasGemmAlgo_t) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (c_type != CUDA_R_32F || compute != CUBLAS_COMPUTE_32F || a_type != b_type)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  // The scalars are read now (host pointer mode), the matrices when the GEMM runs.
  const float al = *static_cast<const float*>(alpha), be = *static_cast<const float*>(beta);
  return on_stream(handle, [=] {
    return gemm_one(transa, transb, m, n, k, al, a, a_type, lda, b, b_type, ldb, be,
                    static_cast<float*>(c), ldc);
  });
}

cublasStatus_t cublasSgemmBatched(cublasHandle_t handle, cublasOperation_t transa,
                                  cublasOperation_t transb, int m, int n, int k,
                                  const float* alpha, const float* const a[], int lda,
                                  const float* const b[], int ldb, const float* beta,
                                  float* const c[], int ldc, int batch) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (batch < 0) return CUBLAS_STATUS_INVALID_VALUE;
  // The pointer arrays are device memory: read when the GEMMs run, as cuBLAS does.
  const float al = *alpha, be = *beta;
  return on_stream(handle, [=] {
    for (int i = 0; i < batch; ++i) {
      const cublasStatus_t status = gemm_one(transa, transb, m, n, k, al, a[i], CUDA_R_32F, lda,
                                             b[i], CUDA_R_32F, ldb, be, c[i], ldc);
      if (status != CUBLAS_STATUS_SUCCESS) return status;
    }
    return CUBLAS_STATUS_SUCCESS;
  });
}
