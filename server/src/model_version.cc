#include "model_version.h"

#include <cstring>
#include <limits>

#include "baton/string_tensor.hpp"
#include "datatype.h"

namespace baton::serve {

namespace {

std::vector<int64_t> signature_shape(const baton_tensor* t) {
  std::vector<int64_t> shape(static_cast<size_t>(baton_tensor_get_rank(t)));
  for (size_t d = 0; d < shape.size(); ++d) shape[d] = baton_tensor_get_signature_dim(t, static_cast<int32_t>(d));
  return shape;
}

std::vector<int64_t> current_shape(const baton_tensor* t) {
  std::vector<int64_t> shape(static_cast<size_t>(baton_tensor_get_rank(t)));
  for (size_t d = 0; d < shape.size(); ++d) shape[d] = baton_tensor_get_dim(t, static_cast<int32_t>(d));
  return shape;
}

bool describe(const baton_tensor* t, const char* kind, TensorSpec* spec, std::string* error) {
  spec->name = baton_tensor_get_name(t);
  spec->type = baton_tensor_get_type(t);
  const auto datatype = protocol_datatype(spec->type);
  if (!datatype) {
    *error = std::string(kind) + " '" + spec->name + "' has type " + baton_tensor_type_name(spec->type) +
             ", which the Open Inference Protocol has no datatype for";
    return false;
  }
  spec->datatype = std::string(*datatype);
  spec->shape = signature_shape(t);
  return true;
}

std::string names_of(const std::vector<TensorSpec>& specs) {
  std::string s;
  for (const TensorSpec& t : specs) s += (s.empty() ? "'" : ", '") + t.name + "'";
  return s;
}

// The shapes of a request's inputs but their first dimension, in the model's input order, and the rows
// (first dimension) they share; the key stays "" when they share none: the request then runs alone.
void batch_key(const std::vector<TensorSpec>& model_inputs, const InferRequest& request, std::string* key,
               int64_t* rows) {
  std::string k;
  int64_t shared = -1;
  for (const TensorSpec& spec : model_inputs) {
    for (const InputTensor& in : request.inputs) {
      if (in.name != spec.name) continue;
      if (in.shape.empty() || (shared >= 0 && in.shape[0] != shared)) return;
      shared = in.shape[0];
      for (size_t d = 1; d < in.shape.size(); ++d) k += std::to_string(in.shape[d]) + ",";
      k += ";";
    }
  }
  if (shared <= 0) return;
  *key = k;
  *rows = shared;
}

// Why a model cannot be batched ("" when it can): every input and output needs a dynamic first
// dimension and a fixed-size datatype.
std::string not_batchable(const std::vector<TensorSpec>& inputs, const std::vector<TensorSpec>& outputs) {
  for (const auto* specs : {&inputs, &outputs}) {
    for (const TensorSpec& t : *specs) {
      const char* kind = specs == &inputs ? "input" : "output";
      if (t.shape.empty() || t.shape[0] != -1) {
        return std::string(kind) + " '" + t.name + "' has shape " + shape_text(t.shape) +
               ": max-batch needs every input's and output's first dimension dynamic (-1), a batch";
      }
      if (t.type == BATON_TYPE_STRING) return std::string(kind) + " '" + t.name + "' is BYTES: max-batch cannot join it";
    }
  }
  return "";
}

}  // namespace

std::unique_ptr<ModelVersion> ModelVersion::load(baton_environment* env, DeadlineWatchdog* watchdog,
                                                 const RequestLog* log, const std::string& name, int64_t version, const std::string& path,
                                                 const PoolSettings& settings, std::string* error) {
  std::unique_ptr<ModelVersion> m(new ModelVersion());
  m->name_ = name;
  m->version_ = version;
  m->settings_ = settings;
  m->watchdog_ = watchdog;
  m->log_ = log;
  const std::string where = "model '" + name + "' version " + std::to_string(version) + " (" + path + ")";
  for (int k = 0; k < settings.instances; ++k) {
    baton_interpreter* interp = baton_interpreter_create_from_file(env, path.c_str());
    if (!interp) {
      *error = where + ": " + baton_last_error();
      return nullptr;
    }
    auto instance = std::make_unique<Instance>();
    instance->interp = interp;
    m->instances_.push_back(std::move(instance));
  }
  baton_interpreter* first = m->instances_.front()->interp;
  if (const char* plan = baton_interpreter_plan(first, BATON_PLAN_SUMMARY)) m->plan_summary_ = plan;
  for (int32_t i = 0; i < baton_interpreter_input_count(first); ++i) {
    TensorSpec spec;
    if (!describe(baton_interpreter_input(first, i), "input", &spec, error)) {
      *error = where + ": " + *error;
      return nullptr;
    }
    m->inputs_.push_back(std::move(spec));
  }
  for (int32_t i = 0; i < baton_interpreter_output_count(first); ++i) {
    TensorSpec spec;
    if (!describe(baton_interpreter_output(first, i), "output", &spec, error)) {
      *error = where + ": " + *error;
      return nullptr;
    }
    m->outputs_.push_back(std::move(spec));
  }
  if (settings.max_batch > 1) {
    if (const std::string why = not_batchable(m->inputs_, m->outputs_); !why.empty()) {
      *error = where + ": " + why;
      return nullptr;
    }
  }
  for (auto& instance : m->instances_) {
    Instance* raw = instance.get();
    instance->worker = std::thread([mv = m.get(), raw] { mv->work(raw); });
  }
  return m;
}

ModelVersion::~ModelVersion() {
  stop();
  for (auto& instance : instances_) baton_interpreter_destroy(instance->interp);
}

void ModelVersion::stop(const std::string& reason) {
  {
    std::lock_guard lock(mutex_);
    if (!stopping_) stop_reason_ = reason;
    stopping_ = true;
  }
  ready_.notify_all();
  for (auto& instance : instances_) {
    if (instance->worker.joinable()) instance->worker.join();
  }
}

size_t ModelVersion::queue_depth() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

int ModelVersion::input_index(const std::string& name) const {
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (inputs_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

int ModelVersion::output_index(const std::string& name) const {
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (outputs_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

Status ModelVersion::check(const InferRequest& request) const {
  const auto invalid = [](std::string m) { return Status::error(Code::kInvalidArgument, std::move(m)); };
  const std::string model = "model '" + name_ + "'";
  std::vector<bool> given(inputs_.size(), false);
  for (const InputTensor& in : request.inputs) {
    const int i = input_index(in.name);
    if (i < 0) return invalid("unknown input '" + in.name + "': " + model + " has inputs " + names_of(inputs_));
    if (given[i]) return invalid("input '" + in.name + "' is given twice");
    given[i] = true;
    const TensorSpec& spec = inputs_[i];
    if (in.datatype != spec.datatype) {
      return invalid("input '" + in.name + "': datatype " + in.datatype + ", but " + model + " takes " +
                     spec.datatype);
    }
    if (in.shape.size() != spec.shape.size()) {
      return invalid("input '" + in.name + "': shape " + shape_text(in.shape) + " has rank " +
                     std::to_string(in.shape.size()) + ", but " + model + " takes shape " + shape_text(spec.shape));
    }
    for (size_t d = 0; d < in.shape.size(); ++d) {
      const bool fits = in.shape[d] >= 0 && in.shape[d] <= std::numeric_limits<int32_t>::max() &&
                        (spec.shape[d] < 0 || spec.shape[d] == in.shape[d]);
      if (!fits) {
        return invalid("input '" + in.name + "': shape " + shape_text(in.shape) + " does not fit " + model +
                       "'s shape " + shape_text(spec.shape) + " (dimension " + std::to_string(d) + ")");
      }
    }
    const int64_t count = element_count(in.shape);
    if (count < 0) return invalid("input '" + in.name + "': shape " + shape_text(in.shape) + " is too large");
    if (spec.type == BATON_TYPE_STRING) {
      if (static_cast<int64_t>(in.strings.size()) != count) {
        return invalid("input '" + in.name + "': shape " + shape_text(in.shape) + " has " + std::to_string(count) +
                       " elements, but " + std::to_string(in.strings.size()) + " were given");
      }
    } else {
      const size_t size = datatype_size(spec.datatype);
      if (in.bytes.size() % size != 0 || static_cast<int64_t>(in.bytes.size() / size) != count) {
        return invalid("input '" + in.name + "': shape " + shape_text(in.shape) + " has " + std::to_string(count) +
                       " elements (" + std::to_string(static_cast<uint64_t>(count) * size) + " bytes of " +
                       in.datatype + "), but " +
                       (in.bytes.size() % size == 0 ? std::to_string(in.bytes.size() / size) + " elements"
                                                    : std::to_string(in.bytes.size()) + " bytes") +
                       " were given");
      }
    }
  }
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (!given[i]) return invalid("input '" + inputs_[i].name + "' of " + model + " is missing");
  }
  for (const std::string& out : request.outputs) {
    if (output_index(out) < 0) {
      return invalid("unknown output '" + out + "': " + model + " has outputs " + names_of(outputs_));
    }
  }
  return {};
}

Status ModelVersion::submit(InferRequest request, Done done) {
  const Clock::time_point now = Clock::now();
  metrics_.requests.fetch_add(1, std::memory_order_relaxed);
  const std::string version = std::to_string(version_);
  Status status = check(request);
  if (!status.ok()) {
    metrics_.failures.fetch_add(1, std::memory_order_relaxed);
    log_->record(request.id, name_, version, status, std::chrono::duration<double>(Clock::now() - now).count());
    return status;
  }
  if (settings_.deadline_ms > 0) {
    request.deadline = std::min(request.deadline, now + std::chrono::milliseconds(settings_.deadline_ms));
  }
  Job job{std::move(request), std::move(done), now, {}, 0};
  if (settings_.max_batch > 1) batch_key(inputs_, job.request, &job.batch_key, &job.rows);
  {
    std::lock_guard lock(mutex_);
    if (stopping_) status = Status::error(Code::kUnavailable, stop_reason_);
    if (status.ok() && queue_.size() >= static_cast<size_t>(settings_.queue)) {
      metrics_.queue_full.fetch_add(1, std::memory_order_relaxed);
      status = Status::error(Code::kUnavailable, "model '" + name_ + "': the queue is full (" +
                                                     std::to_string(settings_.queue) +
                                                     " requests waiting); try again later");
    }
    if (status.ok()) queue_.push_back(std::move(job));
  }
  if (!status.ok()) {
    metrics_.failures.fetch_add(1, std::memory_order_relaxed);
    log_->record(job.request.id, name_, version, status, std::chrono::duration<double>(Clock::now() - now).count());
    return status;
  }
  ready_.notify_one();
  return {};
}

void ModelVersion::work(Instance* instance) {
  for (;;) {
    std::vector<Job> batch;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      batch.push_back(std::move(queue_.front()));
      queue_.pop_front();
      if (settings_.max_batch > 1) gather(lock, &batch);
    }
    run_jobs(instance, batch);
  }
}

void ModelVersion::gather(std::unique_lock<std::mutex>& lock, std::vector<Job>* batch) {
  const std::string key = batch->front().batch_key;  // a copy: the vector grows below
  if (key.empty()) return;
  int64_t rows = batch->front().rows;
  const Clock::time_point until = batch->front().received + std::chrono::microseconds(settings_.batch_delay_us);
  for (;;) {
    for (auto it = queue_.begin(); it != queue_.end() && rows < settings_.max_batch;) {
      if (it->batch_key == key && rows + it->rows <= settings_.max_batch) {
        rows += it->rows;
        batch->push_back(std::move(*it));
        it = queue_.erase(it);
      } else {
        ++it;
      }
    }
    if (rows >= settings_.max_batch || stopping_ || Clock::now() >= until) return;
    ready_.wait_until(lock, until);
  }
}

void ModelVersion::run_jobs(Instance* instance, std::vector<Job>& batch) {
  // A request whose deadline passed while it waited fails without running.
  std::vector<Job> live;
  for (Job& job : batch) {
    if (Clock::now() >= job.request.deadline) {
      InferResult late;
      late.status = Status::error(Code::kDeadlineExceeded,
                                  "model '" + name_ + "': the request's deadline passed while it waited in the queue");
      finish(job, std::move(late));
    } else {
      live.push_back(std::move(job));
    }
  }
  std::vector<InferResult> results;
  if (live.size() > 1) {
    try {
      results = run_batch(instance->interp, live);
    } catch (const std::exception& e) {  // allocation failures: the requests fail, the worker lives
      results.assign(live.size(), InferResult{Status::error(Code::kInternal, "model '" + name_ + "': " + e.what()), "", {}});
    }
  }
  for (size_t k = 0; k < live.size(); ++k) {
    if (k < results.size()) {
      finish(live[k], std::move(results[k]));
      continue;
    }
    // Alone (or the batch did not split by rows: one by one).
    InferResult result;
    try {
      result = run(instance->interp, live[k].request);
    } catch (const std::exception& e) {
      result.status = Status::error(Code::kInternal, std::string("model '") + name_ + "': " + e.what());
    }
    finish(live[k], std::move(result));
  }
}

void ModelVersion::finish(Job& job, InferResult result) {
  result.model_version = std::to_string(version_);
  if (!result.status.ok()) metrics_.failures.fetch_add(1, std::memory_order_relaxed);
  if (result.status.code == Code::kDeadlineExceeded) metrics_.deadline_exceeded.fetch_add(1, std::memory_order_relaxed);
  const double seconds = std::chrono::duration<double>(Clock::now() - job.received).count();
  metrics_.observe_latency(seconds);
  log_->record(job.request.id, name_, result.model_version, result.status, seconds);
  try {
    job.done(std::move(result));
  } catch (...) {
    // The protocol side answers its own errors; nothing of theirs may end a worker.
  }
}

std::vector<int> ModelVersion::wanted_outputs(const InferRequest& request) const {
  std::vector<int> wanted;
  if (request.outputs.empty()) {
    for (size_t i = 0; i < outputs_.size(); ++i) wanted.push_back(static_cast<int>(i));
  } else {
    for (const std::string& name : request.outputs) wanted.push_back(output_index(name));
  }
  return wanted;
}

// Invokes with the watchdog armed for `deadline`; false with `status` set when the run failed or ended
// past the deadline (a request not answered by its deadline fails, whatever the timing).
bool ModelVersion::run_invoke(baton_interpreter* interp, Clock::time_point deadline, Status* status) {
  const std::string model = "model '" + name_ + "'";
  metrics_.runs.fetch_add(1, std::memory_order_relaxed);
  watchdog_->arm(interp, deadline);
  const baton_status st = baton_interpreter_invoke(interp);
  const bool cancelled = watchdog_->disarm(interp);
  if (cancelled || (st == BATON_OK && Clock::now() >= deadline)) {
    *status = Status::error(Code::kDeadlineExceeded, model + ": the request's deadline passed while it ran");
    return false;
  }
  if (st != BATON_OK) {
    *status = Status::error(Code::kInternal, model + ": " + baton_interpreter_last_error(interp));
    return false;
  }
  return true;
}

Status ModelVersion::read_outputs(baton_interpreter* interp, const std::vector<int>& wanted,
                                  std::vector<OutputTensor>* outputs) {
  for (int i : wanted) {
    const baton_tensor* t = baton_interpreter_output(interp, i);
    OutputTensor out;
    out.name = outputs_[i].name;
    out.datatype = outputs_[i].datatype;
    out.shape = current_shape(t);
    std::string bytes(baton_tensor_get_byte_size(t), '\0');
    if (baton_interpreter_get_output(interp, i, bytes.data(), bytes.size()) != BATON_OK) {
      return Status::error(Code::kInternal, "output '" + out.name + "': " + baton_interpreter_last_error(interp));
    }
    if (outputs_[i].type == BATON_TYPE_STRING) {
      const int64_t count = element_count(out.shape);
      const std::string why = strings::check_packed(bytes.data(), bytes.size(), count);
      if (!why.empty()) return Status::error(Code::kInternal, "output '" + out.name + "': " + why);
      const strings::PackedStrings packed(bytes.data());
      for (int32_t k = 0; k < packed.count(); ++k) out.strings.emplace_back(packed.at(k));
    } else {
      out.bytes = std::move(bytes);
    }
    outputs->push_back(std::move(out));
  }
  return {};
}

InferResult ModelVersion::run(baton_interpreter* interp, InferRequest& request) {
  InferResult result;
  const std::string model = "model '" + name_ + "'";
  for (InputTensor& in : request.inputs) {
    const int i = input_index(in.name);
    const baton_tensor* t = baton_interpreter_input(interp, i);
    if (current_shape(t) != in.shape) {
      std::vector<int32_t> dims(in.shape.begin(), in.shape.end());  // check() kept each within int32
      if (baton_interpreter_resize_input(interp, i, static_cast<int32_t>(dims.size()), dims.data()) != BATON_OK) {
        result.status = Status::error(Code::kInvalidArgument, "input '" + in.name + "': " + model +
                                                                  " cannot take shape " + shape_text(in.shape) + ": " +
                                                                  baton_interpreter_last_error(interp));
        return result;
      }
    }
    baton_status st;
    if (inputs_[i].type == BATON_TYPE_STRING) {
      strings::PackedWriter packed;
      for (const std::string& s : in.strings) packed.add(s);
      const std::vector<uint8_t> bytes = packed.packed();
      st = baton_interpreter_set_input(interp, i, bytes.data(), bytes.size());
    } else {
      st = baton_interpreter_set_input(interp, i, in.bytes.data(), in.bytes.size());
    }
    if (st != BATON_OK) {
      result.status = Status::error(Code::kInvalidArgument,
                                    "input '" + in.name + "': " + baton_interpreter_last_error(interp));
      return result;
    }
  }
  if (!run_invoke(interp, request.deadline, &result.status)) return result;
  result.status = read_outputs(interp, wanted_outputs(request), &result.outputs);
  return result;
}

std::vector<InferResult> ModelVersion::run_batch(baton_interpreter* interp, std::vector<Job>& jobs) {
  int64_t total = 0;
  Clock::time_point deadline = Clock::time_point::max();
  for (const Job& job : jobs) {
    total += job.rows;
    deadline = std::min(deadline, job.request.deadline);
  }
  const auto all_fail = [&](const Status& s) { return std::vector<InferResult>(jobs.size(), InferResult{s, "", {}}); };
  const std::string model = "model '" + name_ + "'";
  for (size_t i = 0; i < inputs_.size(); ++i) {
    std::string bytes;
    std::vector<int64_t> shape;
    for (const Job& job : jobs) {
      for (const InputTensor& in : job.request.inputs) {
        if (in.name != inputs_[i].name) continue;
        if (shape.empty()) shape = in.shape;
        bytes += in.bytes;
      }
    }
    shape[0] = total;
    const baton_tensor* t = baton_interpreter_input(interp, static_cast<int32_t>(i));
    if (current_shape(t) != shape) {
      std::vector<int32_t> dims(shape.begin(), shape.end());
      if (baton_interpreter_resize_input(interp, static_cast<int32_t>(i), static_cast<int32_t>(dims.size()), dims.data()) !=
          BATON_OK) {
        return all_fail(Status::error(Code::kInvalidArgument, "input '" + inputs_[i].name + "': " + model +
                                                                  " cannot take a batch of shape " + shape_text(shape) +
                                                                  ": " + baton_interpreter_last_error(interp)));
      }
    }
    if (baton_interpreter_set_input(interp, static_cast<int32_t>(i), bytes.data(), bytes.size()) != BATON_OK) {
      return all_fail(Status::error(Code::kInvalidArgument,
                                    "input '" + inputs_[i].name + "': " + baton_interpreter_last_error(interp)));
    }
  }
  Status status;
  if (!run_invoke(interp, deadline, &status)) return all_fail(status);
  std::vector<int> every(outputs_.size());
  for (size_t i = 0; i < every.size(); ++i) every[i] = static_cast<int>(i);
  std::vector<OutputTensor> joined;
  if (Status s = read_outputs(interp, every, &joined); !s.ok()) return all_fail(s);
  for (const OutputTensor& out : joined) {
    if (out.shape.empty() || out.shape[0] != total) return {};  // not split by rows: run them one by one
  }
  std::vector<InferResult> results(jobs.size());
  int64_t row = 0;
  for (size_t k = 0; k < jobs.size(); ++k) {
    for (int i : wanted_outputs(jobs[k].request)) {
      const OutputTensor& all = joined[static_cast<size_t>(i)];
      const size_t row_bytes = all.bytes.size() / static_cast<size_t>(total);
      OutputTensor out;
      out.name = all.name;
      out.datatype = all.datatype;
      out.shape = all.shape;
      out.shape[0] = jobs[k].rows;
      out.bytes = all.bytes.substr(static_cast<size_t>(row) * row_bytes, static_cast<size_t>(jobs[k].rows) * row_bytes);
      results[k].outputs.push_back(std::move(out));
    }
    row += jobs[k].rows;
  }
  return results;
}

}  // namespace baton::serve
