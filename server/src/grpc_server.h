// The Open Inference Protocol over gRPC (GRPCInferenceService of server/proto/grpc_service.proto), on
// gRPC's synchronous server: each RPC's thread waits for its model's worker. The same checks, queue and
// deadline as REST; errors map to INVALID_ARGUMENT, NOT_FOUND, UNAVAILABLE, DEADLINE_EXCEEDED, INTERNAL.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "inference_service.h"

namespace baton::serve {

struct GrpcOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8001;  // 0: a free port
  size_t max_message_bytes = 64u << 20;
};

class GrpcServer {
 public:
  GrpcServer(InferenceService& service, const GrpcOptions& options);
  ~GrpcServer();
  bool start(std::string* error);
  uint16_t port() const;
  // Refuses new RPCs and waits for those running, at most `timeout`.
  void shutdown(std::chrono::milliseconds timeout);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace baton::serve
