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
  catalog_.reset();  // interpreters before the environments they were made in
  environments_.clear();
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
  if (it != environments_.end()) return it->second->get();
  api::Environment::Settings settings;
  settings.config_path = options_.config_path;
  settings.plugin_dirs = options_.plugin_dirs;
  settings.delegates = chain;
  settings.no_delegates = no_delegates;
  settings.threads = threads;
  settings.verbose = options_.verbose;
  for (const std::string& p : isolated) {
    if (p == "all") {
      settings.isolate_all = true;
    } else {
      settings.isolate.push_back(p);
    }
  }
  std::unique_ptr<api::Environment> made;
  try {
    made = std::make_unique<api::Environment>(settings);
  } catch (const api::Error& e) {
    *error = e.what();
    return nullptr;
  }
  baton_environment* env = made->get();
  environments_[key] = std::move(made);
  return env;
}

std::shared_ptr<ModelVersion> InferenceService::load_version(const RepositoryModel& m, const ModelVersionFiles& v,
                                                             std::string* error) {
  const int threads = m.settings.threads > 0 ? m.settings.threads : options_.threads;
  PoolSettings pool;
  pool.instances = m.settings.instances > 0 ? m.settings.instances
                   : options_.instances > 0 ? options_.instances
                                            : std::max(1, usable_cpus() / std::max(1, threads));
  pool.queue = m.settings.queue > 0 ? m.settings.queue : options_.queue;
  pool.deadline_ms = m.settings.deadline_ms >= 0 ? m.settings.deadline_ms : options_.deadline_ms;
  pool.max_batch = std::max(1, m.settings.max_batch);
  pool.batch_delay_us = std::max<int64_t>(0, m.settings.batch_delay_us);
  baton_environment* env = nullptr;
  {
    std::lock_guard lock(catalog_mutex_);
    env = environment_for(threads, m.settings, error);
  }
  if (!env) return nullptr;
  return ModelVersion::load(env, watchdog_.get(), log_.get(), m.name, v.version, v.path.string(), pool, error);
}

std::shared_ptr<const ServedModel> InferenceService::load_model(const RepositoryModel& m, std::string* error) {
  auto served = std::make_shared<ServedModel>();
  served->name = m.name;
  served->settings = m.settings;
  for (const ModelVersionFiles& v : m.versions) {
    auto version = load_version(m, v, error);
    if (!version) return nullptr;
    served->versions[v.version] = std::move(version);
  }
  return served;
}

bool InferenceService::start(const ServiceOptions& options, std::string* error) {
  options_ = options;
  log_ = std::make_unique<RequestLog>(options.log_requests);
  const std::vector<RepositoryModel> repository = scan_repository(options.repository, error);
  if (repository.empty()) return false;
  watchdog_ = std::make_unique<DeadlineWatchdog>();
  auto catalog = std::make_shared<Catalog>();
  for (const RepositoryModel& m : repository) {
    auto served = load_model(m, error);
    if (!served) return false;
    (*catalog)[m.name] = std::move(served);
  }
  std::lock_guard lock(catalog_mutex_);
  catalog_ = std::move(catalog);
  return true;
}

std::shared_ptr<const Catalog> InferenceService::models() const {
  std::lock_guard lock(catalog_mutex_);
  return catalog_;
}

std::vector<std::string> InferenceService::reload() {
  std::vector<std::string> report;
  std::string error;
  const std::vector<RepositoryModel> repository = scan_repository(options_.repository, &error);
  if (repository.empty()) return {"reload: " + error + "; every model stays as it was"};
  const std::shared_ptr<const Catalog> old = models();
  auto next = std::make_shared<Catalog>();
  const auto versions_text = [](const std::vector<int64_t>& vs) {
    std::string t;
    for (int64_t v : vs) {
      if (!t.empty()) t += ',';
      t += std::to_string(v);  // appended apart: "," + to_string() trips a false -Wrestrict in GCC 12
    }
    return t;
  };
  for (const RepositoryModel& m : repository) {
    const auto it = old->find(m.name);
    if (it == old->end() || it->second->settings != m.settings) {
      // A new model, or one whose config.ini changed: every version loaded anew.
      auto served = load_model(m, &error);
      if (!served) {
        report.push_back("reload: " + error + (it == old->end() ? "; not served" : "; its versions stay as they were"));
        if (it != old->end()) (*next)[m.name] = it->second;
        continue;
      }
      std::vector<int64_t> vs;
      for (const auto& [v, mv] : served->versions) vs.push_back(v);
      report.push_back("reload: model " + m.name + (it == old->end() ? " loaded" : " reloaded (config.ini changed)") +
                       ", versions " + versions_text(vs));
      (*next)[m.name] = std::move(served);
      continue;
    }
    // The same model: keep the versions still there, load the new ones.
    auto served = std::make_shared<ServedModel>();
    served->name = m.name;
    served->settings = m.settings;
    std::vector<int64_t> added, removed, failed;
    for (const ModelVersionFiles& v : m.versions) {
      if (const auto kept = it->second->versions.find(v.version); kept != it->second->versions.end()) {
        served->versions[v.version] = kept->second;
        continue;
      }
      auto version = load_version(m, v, &error);
      if (!version) {
        report.push_back("reload: " + error + "; not served");
        failed.push_back(v.version);
        continue;
      }
      served->versions[v.version] = std::move(version);
      added.push_back(v.version);
    }
    for (const auto& [v, mv] : it->second->versions) {
      if (!served->versions.count(v)) removed.push_back(v);
    }
    if (served->versions.empty()) {
      // Every version it has now failed to load: what was served stays.
      (*next)[m.name] = it->second;
      continue;
    }
    if (!added.empty()) report.push_back("reload: model " + m.name + ": loaded versions " + versions_text(added));
    if (!removed.empty()) report.push_back("reload: model " + m.name + ": unloaded versions " + versions_text(removed));
    (*next)[m.name] = std::move(served);
  }
  for (const auto& [name, served] : *old) {
    if (!next->count(name)) report.push_back("reload: model " + name + " unloaded");
  }
  // What the new catalog no longer holds finishes what was queued to it, then goes (the requests that
  // still hold it are answered; a request that finds it stopped is told it is no longer served).
  std::vector<std::shared_ptr<ModelVersion>> retired;
  for (const auto& [name, served] : *old) {
    const auto now = next->find(name);
    for (const auto& [v, mv] : served->versions) {
      const bool kept = now != next->end() && now->second->versions.count(v) && now->second->versions.at(v) == mv;
      if (!kept) retired.push_back(mv);
    }
  }
  {
    std::lock_guard lock(catalog_mutex_);
    catalog_ = std::move(next);
  }
  for (const auto& mv : retired) mv->stop("model '" + mv->name() + "' version " + std::to_string(mv->version()) + " was unloaded");
  return report;
}

std::map<std::string, uint64_t> InferenceService::plugin_deaths() const {
  std::map<std::string, uint64_t> deaths;
  std::lock_guard lock(catalog_mutex_);
  for (const auto& [key, owner] : environments_) {
    const baton_environment* env = owner->get();
    for (int32_t i = 0; i < baton_environment_plugin_count(env); ++i) {
      deaths[baton_environment_plugin_name(env, i)] += baton_environment_plugin_deaths(env, i);
    }
  }
  return deaths;
}

Status InferenceService::find(const std::string& model, const std::string& version, FoundVersion* out) const {
  const std::shared_ptr<const Catalog> catalog = models();
  auto it = catalog->find(model);
  if (it == catalog->end()) return Status::error(Code::kNotFound, "unknown model '" + model + "'");
  const auto& versions = it->second->versions;
  out->model = it->second;
  if (version.empty()) {
    out->version = versions.rbegin()->second;
    return {};
  }
  for (const auto& [v, served] : versions) {
    if (std::to_string(v) == version) {
      out->version = served;
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
  for (const auto& [name, served] : *models()) {
    for (const auto& [v, version] : served->versions) version->stop("the server is shutting down");
  }
}

}  // namespace baton::serve
