// The Open Inference Protocol over HTTP/1.1 (Boost.Beast on Boost.Asio): a few I/O threads read
// requests and write answers; inference runs on the models' own workers, so a slow model never holds
// an I/O thread. Routes:
//   GET  /v2/health/live, /v2/health/ready, /v2
//   GET  /v2/models/{name}[/versions/{v}], /v2/models/{name}[/versions/{v}]/ready
//   POST /v2/models/{name}[/versions/{v}]/infer
//   GET  /metrics (Prometheus text format)
// A body whose Content-Length is over the limit is refused (413) before any of it is read.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "inference_service.h"

namespace baton::serve {

struct RestOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8000;  // 0: a free port (port() tells which)
  int threads = 2;
  size_t max_body_bytes = 64u << 20;
};

class RestServer {
 public:
  RestServer(InferenceService& service, const RestOptions& options);
  ~RestServer();
  // Binds and listens; false with `error` set when the address cannot be used.
  bool start(std::string* error);
  uint16_t port() const;
  // Closes the listening socket: no new connections. Open connections are still answered.
  void stop_accepting();
  // Stops the I/O threads (after the service has drained) and closes every connection.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The Prometheus text of every model's counters (also used by tests through /metrics).
std::string metrics_text(const InferenceService& service);

}  // namespace baton::serve
