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

#include "baton/baton.hpp"
#include "baton/c_api.h"
#include "deadline_watchdog.h"
#include "model_repository.h"
#include "model_version.h"
#include "request_log.h"

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
  bool log_requests = false;  // a line per request, not only per failure
};

struct ServedModel {
  std::string name;
  ModelSettings settings;  // from its config.ini; a reload that finds others loads the model anew
  std::map<int64_t, std::shared_ptr<ModelVersion>> versions;  // ascending; the last is the default
};
// Every served model by name: a snapshot. A reload makes a new one; a request keeps the snapshot it
// found its model in, so a version unloaded meanwhile finishes what it was given.
using Catalog = std::map<std::string, std::shared_ptr<const ServedModel>>;

struct FoundVersion {
  std::shared_ptr<const ServedModel> model;
  std::shared_ptr<ModelVersion> version;
};

class InferenceService {
 public:
  // Loads every model of the repository; false with `error` set (naming the model, file or setting).
  bool start(const ServiceOptions& options, std::string* error);
  ~InferenceService();

  std::shared_ptr<const Catalog> models() const;
  // The model version a request names ("" : the default); kNotFound with a message otherwise.
  Status find(const std::string& model, const std::string& version, FoundVersion* out) const;
  bool ready() const { return !draining_.load(); }

  // Reads the repository again: loads the versions and models that appeared (and a model whose
  // config.ini changed, anew), then unloads those that went, each after it has answered what it was
  // given. Requests to other models are not touched. Returns one line per change; a model or version
  // that fails to load is a line too, and what was served of it stays served. Not thread-safe with
  // itself: the server calls it from its main thread.
  std::vector<std::string> reload();

  // Deaths of isolated plugins' processes under the served models, by plugin name (every loaded plugin
  // has a line, 0 for most).
  std::map<std::string, uint64_t> plugin_deaths() const;

  // Requests in flight: a protocol begins one when it accepts a request and ends it when the answer is
  // sent. begin_request() is false while draining: the request is refused.
  bool begin_request();
  void end_request();
  // Refuses new requests from now on; waits up to `timeout` for those in flight. False on timeout.
  bool drain(std::chrono::milliseconds timeout);
  // Finishes queued work and joins every worker.
  void stop();

  // The request log the protocols and models write to.
  const RequestLog& log() const { return *log_; }

 private:
  baton_environment* environment_for(int threads, const ModelSettings& model, std::string* error);
  // Loads every version of `m`; null with `error` set when one fails.
  std::shared_ptr<const ServedModel> load_model(const RepositoryModel& m, std::string* error);
  std::shared_ptr<ModelVersion> load_version(const RepositoryModel& m, const ModelVersionFiles& v, std::string* error);

  ServiceOptions options_;
  // By threads per interpreter, delegate chain and isolated plugins: models that ask for the same share one.
  std::map<std::string, std::unique_ptr<api::Environment>> environments_;
  std::unique_ptr<DeadlineWatchdog> watchdog_;
  mutable std::mutex catalog_mutex_;  // guards catalog_ (the pointer) and environments_
  std::shared_ptr<const Catalog> catalog_ = std::make_shared<Catalog>();
  std::atomic<bool> draining_{false};
  std::mutex inflight_mutex_;
  std::condition_variable inflight_done_;
  int inflight_ = 0;
  std::unique_ptr<RequestLog> log_ = std::make_unique<RequestLog>(false);
};

// CPUs this process may run on (its affinity mask).
int usable_cpus();

}  // namespace baton::serve
