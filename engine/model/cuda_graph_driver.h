// CudaGraphDriver: the GraphDriver of cuda_graph.h with the CUDA runtime, on CudaBackend's one
// stream. Capture is thread-local (cudaStreamCaptureModeThreadLocal), so only this thread's
// calls can invalidate it; a scratch buffer that would grow while capturing refuses (the
// backend's grow-only buffers ask capturing()), and every growth moves buffer_epoch().
// new_nodes() names the capture's nodes by CUPTI's ids (cuptiGetGraphNodeId) in a build with
// CUPTI, reading the graph being captured (cudaStreamGetCaptureInfo, cudaGraphGetNodes).
// Only compiled with the CUDA toolkit (LLMBENCH_HAVE_CUDA); CudaBackend owns one.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <unordered_set>
#include <vector>

#include "engine/model/cuda_graph.h"

namespace llmbench {

class CudaGraphDriver final : public GraphDriver {
 public:
  explicit CudaGraphDriver(cudaStream_t stream) : stream_(stream) {}

  void begin_capture() override;
  std::unique_ptr<GraphExec> end_capture() override;
  void abort_capture() noexcept override;
  void launch(GraphExec& graph) override;
  std::uint64_t buffer_epoch() const override { return epoch_; }
  std::vector<std::uint64_t> new_nodes() override;

  // For the backend's scratch buffers: true between begin_capture and the capture's end.
  bool capturing() const { return capturing_; }
  // A scratch buffer was reallocated: graphs recorded before may point at freed memory.
  void buffer_moved() { ++epoch_; }

 private:
  cudaStream_t stream_;
  bool capturing_ = false;
  std::uint64_t epoch_ = 0;
  std::unordered_set<cudaGraphNode_t> seen_;  // the capture's nodes new_nodes() named
};

}  // namespace llmbench
