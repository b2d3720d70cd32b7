#include "inference_service.h"

#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <thread>

#include "model_repository.h"

namespace baton::serve {

int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

InferenceService::~InferenceService() {
  stop();
  models_.clear();  // interpreters before the environments they were made in
  for (auto& [threads, env] : environments_) baton_environment_destroy(env);
}

baton_environment* InferenceService::environment_for(int threads, const ModelSettings& model, std::string* error) {
  // One environment for the server. The C API sets threads, the delegate chain and isolation per
  // environment, so a model whose config asks for others gets an environment of its own (the plugins'
  // code is shared: the libraries are opened once per process).
  const std::vector<std::string>& chain = model.has_delegates ? model.delegates : options_.delegates;
  const bool no_delegates = model.has_delegates ? model.delegates.empty() : options_.no_delegates;
  std::vector<std::string> isolated = options_.isolate;
  isolated.insert(isolated.end(), model.isolate.begin(), model.isolate.end());
  std::string key = std::to_string(threads) + (no_delegates ? "|none|" : "|");
  for (const std::string& d : chain) key += d + ",";
  key += "|";
  for (const std::string& p : isolated) key += p + ",";
  auto it = environments_.find(key);
  if (it != environments_.end()) return it->second;
  std::vector<const char*> dirs, delegates, isolate;
  for (const std::string& d : options_.plugin_dirs) dirs.push_back(d.c_str());
  for (const std::string& d : chain) delegates.push_back(d.c_str());
  bool isolate_all = false;
  for (const std::string& p : isolated) {
    if (p == "all") isolate_all = true;
    isolate.push_back(p.c_str());
  }
  baton_environment_options o{};
  o.struct_size = sizeof o;
  o.config_path = options_.config_path.empty() ? nullptr : options_.config_path.c_str();
  o.plugin_dirs = dirs.data();
  o.plugin_dir_count = dirs.size();
  o.delegates = delegates.data();
  o.delegate_count = delegates.size();
  o.no_delegates = no_delegates ? 1 : 0;
  o.threads = threads;
  o.verbose = options_.verbose ? 1 : 0;
  o.isolate = isolate_all ? nullptr : isolate.data();
  o.isolate_count = isolate_all ? 0 : isolate.size();
  o.isolate_all = isolate_all ? 1 : 0;
  baton_environment* env = baton_environment_create(&o);
  if (!env) {
    *error = baton_last_error();
    return nullptr;
  }
  environments_[key] = env;
  return env;
}

bool InferenceService::start(const ServiceOptions& options, std::string* error) {
  options_ = options;
  const std::vector<RepositoryModel> repository = scan_repository(options.repository, error);
  if (repository.empty()) return false;
  watchdog_ = std::make_unique<DeadlineWatchdog>();
  for (const RepositoryModel& m : repository) {
    const int threads = m.settings.threads > 0 ? m.settings.threads : options.threads;
    PoolSettings pool;
    pool.instances = m.settings.instances > 0 ? m.settings.instances
                     : options.instances > 0  ? options.instances
                                              : std::max(1, usable_cpus() / std::max(1, threads));
    pool.queue = m.settings.queue > 0 ? m.settings.queue : options.queue;
    pool.deadline_ms = m.settings.deadline_ms >= 0 ? m.settings.deadline_ms : options.deadline_ms;
    baton_environment* env = environment_for(threads, m.settings, error);
    if (!env) return false;
    ServedModel& served = models_[m.name];
    served.name = m.name;
    for (const ModelVersionFiles& v : m.versions) {
      auto version = ModelVersion::load(env, watchdog_.get(), m.name, v.version, v.path.string(), pool, error);
      if (!version) return false;
      served.versions[v.version] = std::move(version);
    }
  }
  return true;
}

Status InferenceService::find(const std::string& model, const std::string& version, ModelVersion** out) const {
  auto it = models_.find(model);
  if (it == models_.end()) return Status::error(Code::kNotFound, "unknown model '" + model + "'");
  const auto& versions = it->second.versions;
  if (version.empty()) {
    *out = versions.rbegin()->second.get();
    return {};
  }
  for (const auto& [v, served] : versions) {
    if (std::to_string(v) == version) {
      *out = served.get();
      return {};
    }
  }
  std::string known;
  for (const auto& [v, served] : versions) known += (known.empty() ? "" : ", ") + std::to_string(v);
  return Status::error(Code::kNotFound, "model '" + model + "' has no version '" + version + "' (versions: " + known + ")");
}

bool InferenceService::begin_request() {
  std::lock_guard lock(inflight_mutex_);
  if (draining_.load()) return false;
  ++inflight_;
  return true;
}

void InferenceService::end_request() {
  std::lock_guard lock(inflight_mutex_);
  if (--inflight_ == 0) inflight_done_.notify_all();
}

bool InferenceService::drain(std::chrono::milliseconds timeout) {
  std::unique_lock lock(inflight_mutex_);
  draining_ = true;
  return inflight_done_.wait_for(lock, timeout, [&] { return inflight_ == 0; });
}

void InferenceService::stop() {
  draining_ = true;
  for (auto& [name, served] : models_) {
    for (auto& [v, version] : served.versions) version->stop();
  }
}

}  // namespace baton::serve
