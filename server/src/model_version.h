// One served version of a model: its interpreters (instances), each run by a worker thread of its own,
// and the bounded queue of requests waiting for one. With max_batch > 1 (dynamic batching, for a model
// whose inputs' and outputs' first dimension is a batch) a worker runs queued requests of the same
// shapes but the first dimension as one: their inputs joined along it, the outputs split back. A request is checked against the model's inputs
// (names, datatypes, shapes with -1 for dynamic dimensions, element counts) before it is queued, so a
// bad request costs no interpreter time; a full queue refuses at once.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "baton/c_api.h"
#include "deadline_watchdog.h"
#include "inference_request.h"
#include "model_metrics.h"
#include "request_log.h"

namespace baton::serve {

struct TensorSpec {
  std::string name;
  baton_tensor_type type = BATON_TYPE_FLOAT32;
  std::string datatype;        // the protocol's name
  std::vector<int64_t> shape;  // -1: dynamic
};

struct PoolSettings {
  int instances = 1;
  int queue = 64;
  int64_t deadline_ms = 0;  // 0: none
  int max_batch = 1;            // rows of one run; 1: no batching
  int64_t batch_delay_us = 0;   // how long a run waits from its first request's arrival for more rows
};

class ModelVersion {
 public:
  using Done = std::function<void(InferResult)>;

  // Creates `settings.instances` interpreters of `path` in `env` and starts their workers; null with
  // `error` set when the model cannot be loaded, has a tensor the protocol cannot carry, or is to be
  // batched and has an input or output whose first dimension is not dynamic.
  static std::unique_ptr<ModelVersion> load(baton_environment* env, DeadlineWatchdog* watchdog,
                                            const RequestLog* log, const std::string& name, int64_t version, const std::string& path,
                                            const PoolSettings& settings, std::string* error);
  ~ModelVersion();  // stop()s; never on one of its own workers
  ModelVersion(const ModelVersion&) = delete;
  ModelVersion& operator=(const ModelVersion&) = delete;

  const std::string& name() const { return name_; }
  int64_t version() const { return version_; }
  const std::vector<TensorSpec>& inputs() const { return inputs_; }
  const std::vector<TensorSpec>& outputs() const { return outputs_; }
  const PoolSettings& settings() const { return settings_; }
  // Where its nodes run, in one line (baton_interpreter_plan's summary).
  const std::string& plan_summary() const { return plan_summary_; }
  ModelMetrics& metrics() { return metrics_; }
  size_t queue_depth() const;

  // The request against the model: every input given once, known, of the model's datatype, a shape
  // that fits the model's (fixed dimensions equal), as many elements as the shape; requested outputs
  // known. The message names the input and the reason.
  Status check(const InferRequest& request) const;
  // Checks, then queues: `done` runs on a worker thread with the result. A refusal (bad request, queue
  // full, stopped) is returned at once and `done` is not called. The request's deadline is the earlier
  // of its own and the model's.
  Status submit(InferRequest request, Done done);
  // Runs what is queued, then joins the workers. Later submits are refused (UNAVAILABLE) with `reason`.
  void stop(const std::string& reason = "the server is shutting down");

 private:
  struct Job {
    InferRequest request;
    Done done;
    Clock::time_point received;
    // Batching: the shapes but the first dimension, by model input ("" : runs alone), and its rows.
    std::string batch_key;
    int64_t rows = 0;
  };
  struct Instance {
    baton_interpreter* interp = nullptr;
    std::thread worker;
  };

  ModelVersion() = default;
  void work(Instance* instance);
  // Moves queued jobs that can run with the first of `batch` into it (mutex_ held by `lock`).
  void gather(std::unique_lock<std::mutex>& lock, std::vector<Job>* batch);
  void run_jobs(Instance* instance, std::vector<Job>& batch);
  // Answers a job: metrics, the request log, its `done`.
  void finish(Job& job, InferResult result);
  InferResult run(baton_interpreter* interp, InferRequest& request);
  // One result per job, or none when an output's first dimension is not the batch's rows.
  std::vector<InferResult> run_batch(baton_interpreter* interp, std::vector<Job>& jobs);
  bool run_invoke(baton_interpreter* interp, Clock::time_point deadline, Status* status);
  Status read_outputs(baton_interpreter* interp, const std::vector<int>& wanted, std::vector<OutputTensor>* outputs);
  std::vector<int> wanted_outputs(const InferRequest& request) const;
  int input_index(const std::string& name) const;
  int output_index(const std::string& name) const;

  std::string name_;
  int64_t version_ = 0;
  PoolSettings settings_;
  std::string plan_summary_;
  DeadlineWatchdog* watchdog_ = nullptr;
  const RequestLog* log_ = nullptr;
  std::vector<TensorSpec> inputs_, outputs_;
  std::vector<std::unique_ptr<Instance>> instances_;
  ModelMetrics metrics_;

  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Job> queue_;
  bool stopping_ = false;
  std::string stop_reason_;
};

}  // namespace baton::serve
