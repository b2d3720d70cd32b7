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
  {
    std::lock_guard lock(mutex_);
    if (stopping_) status = Status::error(Code::kUnavailable, stop_reason_);
    if (status.ok() && queue_.size() >= static_cast<size_t>(settings_.queue)) {
      metrics_.queue_full.fetch_add(1, std::memory_order_relaxed);
      status = Status::error(Code::kUnavailable, "model '" + name_ + "': the queue is full (" +
                                                     std::to_string(settings_.queue) +
                                                     " requests waiting); try again later");
    }
    if (status.ok()) queue_.push_back({std::move(request), std::move(done), now});
  }
  if (!status.ok()) {
    metrics_.failures.fetch_add(1, std::memory_order_relaxed);
    log_->record(request.id, name_, version, status, std::chrono::duration<double>(Clock::now() - now).count());
    return status;
  }
  ready_.notify_one();
  return {};
}

void ModelVersion::work(Instance* instance) {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    InferResult result;
    if (Clock::now() >= job.request.deadline) {
      result.status = Status::error(Code::kDeadlineExceeded, "model '" + name_ +
                                                                 "': the request's deadline passed while it waited in the queue");
    } else {
      try {
        result = run(instance->interp, job.request);
      } catch (const std::exception& e) {  // allocation failures: the request fails, the worker lives
        result.status = Status::error(Code::kInternal, std::string("model '") + name_ + "': " + e.what());
      }
    }
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
  watchdog_->arm(interp, request.deadline);
  const baton_status st = baton_interpreter_invoke(interp);
  const bool cancelled = watchdog_->disarm(interp);
  // Cancelled by the watchdog, or done after the deadline before the watchdog looked: either way late, and
  // a request not answered by its deadline fails (whatever the timing, the same answer).
  if (cancelled || (st == BATON_OK && Clock::now() >= request.deadline)) {
    result.status = Status::error(Code::kDeadlineExceeded, model + ": the request's deadline passed while it ran");
    return result;
  }
  if (st != BATON_OK) {
    result.status = Status::error(Code::kInternal, model + ": " + baton_interpreter_last_error(interp));
    return result;
  }
  std::vector<int> wanted;
  if (request.outputs.empty()) {
    for (size_t i = 0; i < outputs_.size(); ++i) wanted.push_back(static_cast<int>(i));
  } else {
    for (const std::string& name : request.outputs) wanted.push_back(output_index(name));
  }
  for (int i : wanted) {
    const baton_tensor* t = baton_interpreter_output(interp, i);
    OutputTensor out;
    out.name = outputs_[i].name;
    out.datatype = outputs_[i].datatype;
    out.shape = current_shape(t);
    std::string bytes(baton_tensor_get_byte_size(t), '\0');
    if (baton_interpreter_get_output(interp, i, bytes.data(), bytes.size()) != BATON_OK) {
      result.status = Status::error(Code::kInternal, "output '" + out.name + "': " + baton_interpreter_last_error(interp));
      return result;
    }
    if (outputs_[i].type == BATON_TYPE_STRING) {
      const int64_t count = element_count(out.shape);
      const std::string why = strings::check_packed(bytes.data(), bytes.size(), count);
      if (!why.empty()) {
        result.status = Status::error(Code::kInternal, "output '" + out.name + "': " + why);
        return result;
      }
      const strings::PackedStrings packed(bytes.data());
      for (int32_t k = 0; k < packed.count(); ++k) out.strings.emplace_back(packed.at(k));
    } else {
      out.bytes = std::move(bytes);
    }
    result.outputs.push_back(std::move(out));
  }
  return result;
}

}  // namespace baton::serve
