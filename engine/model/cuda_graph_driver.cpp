// CudaGraphDriver (see cuda_graph_driver.h): stream capture, instantiation and launch.
#include "engine/model/cuda_graph_driver.h"

#include <string>

#if defined(LLMBENCH_HAVE_CUPTI)
#include <cupti.h>
#endif

#include "kernels/common/error.h"
#include "kernels/cuda/cuda_check.h"

namespace llmbench {

namespace {

// An instantiated graph, destroyed with its owner.
struct CudaGraphExec final : GraphExec {
  cudaGraphExec_t exec = nullptr;
  ~CudaGraphExec() override {
    if (exec) LLMBENCH_CUDA_CHECK_NOTHROW(cudaGraphExecDestroy(exec));
  }
};

std::string failure(const char* call, cudaError_t rc) {
  (void)cudaGetLastError();  // a capture error is not sticky: clear it for the eager rerun
  return std::string(call) + ": " + cudaGetErrorString(rc);
}

}  // namespace

void CudaGraphDriver::begin_capture() {
  const cudaError_t rc = cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal);
  if (rc != cudaSuccess) throw Error(failure("cudaStreamBeginCapture", rc));
  capturing_ = true;
  seen_.clear();
}

std::vector<std::uint64_t> CudaGraphDriver::new_nodes() {
  std::vector<std::uint64_t> out;
#if defined(LLMBENCH_HAVE_CUPTI)
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaGraph_t graph = nullptr;
  LLMBENCH_CUDA_CHECK(cudaStreamGetCaptureInfo(stream_, &status, nullptr, &graph));
  if (status != cudaStreamCaptureStatusActive || graph == nullptr) return out;
  std::size_t n = 0;
  LLMBENCH_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &n));
  std::vector<cudaGraphNode_t> nodes(n);
  LLMBENCH_CUDA_CHECK(cudaGraphGetNodes(graph, nodes.data(), &n));
  nodes.resize(n);
  for (cudaGraphNode_t node : nodes) {
    if (!seen_.insert(node).second) continue;
    std::uint64_t id = 0;
    // A node CUPTI cannot name stays out of the map: its kernels count as unmatched.
    if (cuptiGetGraphNodeId(node, &id) == CUPTI_SUCCESS) out.push_back(id);
  }
#endif
  return out;
}

std::unique_ptr<GraphExec> CudaGraphDriver::end_capture() {
  capturing_ = false;
  cudaGraph_t graph = nullptr;
  const cudaError_t rc = cudaStreamEndCapture(stream_, &graph);
  if (rc != cudaSuccess) {
    if (graph) LLMBENCH_CUDA_CHECK_NOTHROW(cudaGraphDestroy(graph));
    throw Error(failure("cudaStreamEndCapture", rc));
  }
  auto exec = std::make_unique<CudaGraphExec>();
  const cudaError_t ri = cudaGraphInstantiate(&exec->exec, graph, 0);
  LLMBENCH_CUDA_CHECK_NOTHROW(cudaGraphDestroy(graph));  // the executable graph is a copy
  if (ri != cudaSuccess) {
    exec->exec = nullptr;
    throw Error(failure("cudaGraphInstantiate", ri));
  }
  // Upload now, so the first replay does not pay for it.
  const cudaError_t ru = cudaGraphUpload(exec->exec, stream_);
  if (ru != cudaSuccess) throw Error(failure("cudaGraphUpload", ru));
  return exec;
}

void CudaGraphDriver::abort_capture() noexcept {
  capturing_ = false;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream_, &status) == cudaSuccess &&
      status != cudaStreamCaptureStatusNone) {
    cudaGraph_t graph = nullptr;
    (void)cudaStreamEndCapture(stream_, &graph);  // an invalidated capture ends with an error
    if (graph) (void)cudaGraphDestroy(graph);
  }
  (void)cudaGetLastError();
}

void CudaGraphDriver::launch(GraphExec& graph) {
  LLMBENCH_CUDA_CHECK(cudaGraphLaunch(static_cast<CudaGraphExec&>(graph).exec, stream_));
}

}  // namespace llmbench
