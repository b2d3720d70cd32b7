// The server's core, shared by REST and gRPC: the environment(s) models are loaded in, every loaded
// model version, the server's state (ready, draining) and the count of requests in flight, which a
// SIGTERM waits on before the process exits.
#pragma once

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "baton/c_api.h"
#include "deadline_watchdog.h"
#include "model_repository.h"
#include "model_version.h"

namespace baton::serve {

struct ServiceOptions {
  std::filesystem::path repository;
  // Server defaults; a model's config.ini overrides them.
  int threads = 1;
  int instances = 0;  // 0: usable CPUs / threads, at least 1
  int queue = 64;
  int64_t deadline_ms = 30000;
  // The environment every model is loaded in (plugin folders, delegates, config file, isolation).
  std::string config_path;
  std::vector<std::string> plugin_dirs;
  std::vector<std::string> delegates;
  std::vector<std::string> isolate;
  bool no_delegates = false;
  bool verbose = false;
};

struct ServedModel {
  std::string name;
  std::map<int64_t, std::unique_ptr<ModelVersion>> versions;  // ascending; the last is the default
};

class InferenceService {
 public:
  // Loads every model of the repository; false with `error` set (naming the model, file or setting).
  bool start(const ServiceOptions& options, std::string* error);
  ~InferenceService();

  const std::map<std::string, ServedModel>& models() const { return models_; }
  // The model version a request names ("" : the default); kNotFound with a message otherwise.
  Status find(const std::string& model, const std::string& version, ModelVersion** out) const;
  bool ready() const { return !draining_.load(); }

  // Requests in flight: a protocol begins one when it accepts a request and ends it when the answer is
  // sent. begin_request() is false while draining: the request is refused.
  bool begin_request();
  void end_request();
  // Refuses new requests from now on; waits up to `timeout` for those in flight. False on timeout.
  bool drain(std::chrono::milliseconds timeout);
  // Finishes queued work and joins every worker.
  void stop();

 private:
  baton_environment* environment_for(int threads, const ModelSettings& model, std::string* error);

  ServiceOptions options_;
  // By threads per interpreter, delegate chain and isolated plugins: models that ask for the same share one.
  std::map<std::string, baton_environment*> environments_;
  std::unique_ptr<DeadlineWatchdog> watchdog_;
  std::map<std::string, ServedModel> models_;
  std::atomic<bool> draining_{false};
  std::mutex inflight_mutex_;
  std::condition_variable inflight_done_;
  int inflight_ = 0;
};

// CPUs this process may run on (its affinity mask).
int usable_cpus();

}  // namespace baton::serve
