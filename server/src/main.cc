// `baton-serve` (also `baton serve`, which runs this program): models of a repository served over the
// Open Inference Protocol (KServe v2), REST and gRPC. See --help, and docs/manual.md's "Serving" section.
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <filesystem>
#include <fstream>

#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>

#include "grpc_server.h"
#include "inference_service.h"
#include "rest_server.h"

namespace po = boost::program_options;
using namespace baton::serve;

namespace {

constexpr int kExitOk = 0, kExitError = 1, kExitUsage = 2;

const char* kUsage = "usage: baton serve --model-repository DIR [--http-port N] [--grpc-port N] [options]";

void print_help(const po::options_description& options) {
  std::printf(
      "baton serve: models served over the Open Inference Protocol (KServe v2 / Triton), REST and gRPC.\n\n%s\n\n"
      "The repository has the layout of Triton and OpenVINO Model Server:\n"
      "  DIR/<model>/<version>/model.tflite   versions are positive integers; every version is loaded and a\n"
      "                                        request that names none gets the highest\n"
      "  DIR/<model>/config.ini               optional, INI: instances, threads, queue, deadline-ms (the\n"
      "                                        options below, for this model), delegates (names, or none),\n"
      "                                        isolate (names, or all), max-batch and batch-delay-us (dynamic\n"
      "                                        batching: queued requests of one shape run together, joined along\n"
      "                                        a dynamic first dimension); an unknown key is an error\n\n"
      "REST: GET /v2/health/live, /v2/health/ready, /v2, /v2/models/NAME[/versions/V][/ready], /metrics;\n"
      "      POST /v2/models/NAME[/versions/V]/infer (JSON tensors, or the binary tensor data extension)\n"
      "gRPC: inference.GRPCInferenceService (ServerLive, ServerReady, ModelReady, ServerMetadata,\n"
      "      ModelMetadata, ModelInfer); server/proto/grpc_service.proto\n\n"
      "Each model version has `instances` interpreters and a queue of `queue` requests; a request that finds\n"
      "the queue full is refused at once (HTTP 503, gRPC UNAVAILABLE), one not done by its deadline fails\n"
      "(HTTP 504, gRPC DEADLINE_EXCEEDED). A bad request gets 400 / INVALID_ARGUMENT, an unknown model or\n"
      "version 404 / NOT_FOUND, a body over --max-body-bytes 413 before it is read.\n"
      "SIGTERM or SIGINT: stop listening, answer the requests in flight, exit 0.\n"
      "SIGHUP (or every --repository-poll-secs): read the repository again; load the versions and models that\n"
      "appeared (a model whose config.ini changed, anew), unload those that went once they have answered what\n"
      "they were given. A version's model.tflite is read once: to change a model, add a version.\n"
      "A line on stderr for each request that fails (and, with --log-requests, for each request), naming\n"
      "it by the server's number and the client's id.\n"
      "The options above from --model-repository to --log-requests may also be keys of a [serve] section in\n"
      "baton's config file (--config, else $BATON_CONFIG, $XDG_CONFIG_HOME/baton/baton.conf,\n"
      "/etc/baton/baton.conf); the command line wins.\n\n",
      kUsage);
  std::cout << options << "\n";
  std::printf("Exit status: 0 after a clean shutdown, 1 when a model or port cannot be used, 2 usage error.\n");
}

// The keys of baton serve's [serve] section in baton's config file: the options of its own (not those of
// plugins and delegates, which are the [baton] section's keys).
constexpr const char* kServeKeys[] = {"model-repository", "host",        "http-port",      "grpc-port",
                                      "threads",          "instances",   "queue",          "deadline-ms",
                                      "max-body-bytes",   "http-threads", "drain-timeout-ms", "repository-poll-secs",
                                      "log-requests"};

// The [serve] section of `file` as command-line arguments, for the keys the command line did not give.
// A relative model-repository is the config file's folder's. False with `error` naming the file, line
// and key on an unknown key.
bool serve_section_args(const std::string& file, const po::variables_map& given, std::vector<std::string>* args,
                        std::string* error) {
  std::ifstream in(file);
  if (!in) {
    *error = "config file " + file + ": cannot be read";
    return false;
  }
  const auto trim = [](const std::string& t) {
    const size_t b = t.find_first_not_of(" \t\r");
    return b == std::string::npos ? std::string() : t.substr(b, t.find_last_not_of(" \t\r") - b + 1);
  };
  std::string line, section;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::string text = trim(line);
    if (text.empty() || text[0] == '#') continue;
    if (text[0] == '[') {
      section = trim(text.substr(1, text.find(']') == std::string::npos ? std::string::npos : text.find(']') - 1));
      continue;
    }
    if (section != "serve") continue;
    const size_t eq = text.find('=');
    const std::string key = trim(text.substr(0, eq)), value = eq == std::string::npos ? "" : trim(text.substr(eq + 1));
    const std::string where = file + ":" + std::to_string(number) + ": ";
    if (std::find(std::begin(kServeKeys), std::end(kServeKeys), key) == std::end(kServeKeys)) {
      std::string known;
      for (const char* k : kServeKeys) known += (known.empty() ? "" : ", ") + std::string(k);
      *error = where + "unknown key '" + key + "' in [serve] (known: " + known +
               "; plugins and delegates are set in [baton])";
      return false;
    }
    if (eq == std::string::npos || value.empty()) {
      *error = where + "key '" + key + "' in [serve] has no value";
      return false;
    }
    if (given.count(key) && !given[key].defaulted()) continue;  // the command line wins
    if (key == "log-requests") {
      if (value == "true" || value == "yes" || value == "on" || value == "1") {
        args->push_back("--" + key);
      } else if (!(value == "false" || value == "no" || value == "off" || value == "0")) {
        *error = where + "bad value '" + value + "' for key 'log-requests' in [serve]: expected true or false";
        return false;
      }
      continue;
    }
    std::string v = value;
    if (key == "model-repository" && !std::filesystem::path(v).is_absolute()) {
      v = (std::filesystem::absolute(file).parent_path() / v).lexically_normal().string();
    }
    args->push_back("--" + key + "=" + v);
  }
  return true;
}

// The plan of each version of `served` that `before` (the model as it was, or null) did not have.
void print_plans(const ServedModel& served, const ServedModel* before) {
  for (const auto& [v, mv] : served.versions) {
    if (before && before->versions.count(v) && before->versions.at(v) == mv) continue;
    std::printf("baton serve: model %s version %lld: plan: %s\n", served.name.c_str(), static_cast<long long>(v),
                mv->plan_summary().c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  ServiceOptions service_options;
  RestOptions rest_options;
  GrpcOptions grpc_options;
  std::string repository;
  int http_port = 8000, grpc_port = 8001, drain_ms = 30000, poll_secs = 0;
  std::vector<std::string> plugin_dirs, delegates, isolate;

  po::options_description options("options");
  options.add_options()
      ("model-repository", po::value<std::string>(&repository), "the model repository folder (required)")
      ("host", po::value<std::string>(&rest_options.host)->default_value("127.0.0.1"),
       "the address to listen on, for REST and gRPC (0.0.0.0: every interface)")
      ("http-port", po::value<int>(&http_port)->default_value(8000), "REST port; 0: a free one (printed), -1: no REST")
      ("grpc-port", po::value<int>(&grpc_port)->default_value(8001), "gRPC port; 0: a free one (printed), -1: no gRPC")
      ("threads", po::value<int>(&service_options.threads)->default_value(1), "threads of each interpreter")
      ("instances", po::value<int>(&service_options.instances)->default_value(0),
       "interpreters per model version; 0: the usable CPUs divided by --threads, at least 1")
      ("queue", po::value<int>(&service_options.queue)->default_value(64),
       "requests that may wait per model version; more are refused at once")
      ("deadline-ms", po::value<int64_t>(&service_options.deadline_ms)->default_value(30000),
       "a request not answered by then fails (a gRPC client's own deadline may be earlier); 0: none")
      ("max-body-bytes", po::value<size_t>(&rest_options.max_body_bytes)->default_value(64u << 20),
       "largest REST body and gRPC message")
      ("http-threads", po::value<int>(&rest_options.threads)->default_value(2), "threads reading and writing HTTP")
      ("drain-timeout-ms", po::value<int>(&drain_ms)->default_value(30000),
       "on SIGTERM, how long to wait for requests in flight")
      ("config", po::value<std::string>(&service_options.config_path), "baton's config file (plugins, delegates, ...)")
      ("plugin-dir", po::value<std::vector<std::string>>(&plugin_dirs)->composing(), "a plugin folder, searched first (repeatable)")
      ("delegate", po::value<std::vector<std::string>>(&delegates)->composing(), "the delegate chain, in order (repeatable)")
      ("no-delegates", "op packs only")
      ("isolate", po::value<std::vector<std::string>>(&isolate)->composing(),
       "run this plugin in a process of its own (repeatable; 'all': every plugin)")
      ("repository-poll-secs", po::value<int>(&poll_secs)->default_value(0),
       "read the repository again every this many seconds, as on SIGHUP; 0: only on SIGHUP")
      ("log-requests", "a line on stderr for every request, not only for those that fail")
      ("verbose,v", "info messages on stderr")
      ("help,h", "show this help");
  po::variables_map vm;
  std::string config_error;
  try {
    po::store(po::command_line_parser(argc, argv).options(options).run(), vm);
    // The config file's [serve] keys fill what the command line did not give.
    const std::string given = vm.count("config") ? vm["config"].as<std::string>() : "";
    const char* config = baton_config_file(given.c_str());
    if (!config) {
      config_error = baton_last_error();
    } else if (*config) {
      std::vector<std::string> from_config;
      if (!serve_section_args(config, vm, &from_config, &config_error)) {
        std::fprintf(stderr, "baton serve: %s\n", config_error.c_str());
        return kExitUsage;
      }
      po::store(po::command_line_parser(from_config).options(options).run(), vm);
    }
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "baton serve: %s\n%s (try baton serve --help)\n", e.what(), kUsage);
    return kExitUsage;
  }
  if (!config_error.empty() && !vm.count("help")) {
    std::fprintf(stderr, "baton serve: %s\n", config_error.c_str());
    return kExitError;
  }
  if (vm.count("help")) {
    print_help(options);
    return kExitOk;
  }
  const auto usage_error = [](const std::string& message) {
    std::fprintf(stderr, "baton serve: %s\n%s (try baton serve --help)\n", message.c_str(), kUsage);
    return kExitUsage;
  };
  if (repository.empty()) return usage_error("--model-repository is required");
  if (http_port < -1 || http_port > 65535) return usage_error("--http-port must be -1 to 65535");
  if (grpc_port < -1 || grpc_port > 65535) return usage_error("--grpc-port must be -1 to 65535");
  if (http_port < 0 && grpc_port < 0) return usage_error("--http-port and --grpc-port are both -1: nothing to serve");
  if (service_options.threads < 1) return usage_error("--threads must be at least 1");
  if (service_options.instances < 0) return usage_error("--instances must be 0 or more");
  if (service_options.queue < 1) return usage_error("--queue must be at least 1");
  if (service_options.deadline_ms < 0) return usage_error("--deadline-ms must be 0 or more");
  if (rest_options.threads < 1) return usage_error("--http-threads must be at least 1");
  if (drain_ms < 0) return usage_error("--drain-timeout-ms must be 0 or more");
  if (poll_secs < 0) return usage_error("--repository-poll-secs must be 0 or more");
  service_options.repository = repository;
  service_options.plugin_dirs = plugin_dirs;
  service_options.delegates = delegates;
  service_options.isolate = isolate;
  service_options.no_delegates = vm.count("no-delegates") > 0;
  service_options.verbose = vm.count("verbose") > 0;
  service_options.log_requests = vm.count("log-requests") > 0;
  grpc_options.host = rest_options.host;
  grpc_options.max_message_bytes = rest_options.max_body_bytes;
  rest_options.port = static_cast<uint16_t>(std::max(0, http_port));
  grpc_options.port = static_cast<uint16_t>(std::max(0, grpc_port));

  // Every thread started from here on inherits the blocked signals; main waits for them with sigwait.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  InferenceService service;
  std::string error;
  if (!service.start(service_options, &error)) {
    std::fprintf(stderr, "baton serve: %s\n", error.c_str());
    return kExitError;
  }
  for (const auto& [name, served] : *service.models()) {
    std::string versions;
    for (const auto& [v, mv] : served->versions) versions += (versions.empty() ? "" : ",") + std::to_string(v);
    const PoolSettings& s = served->versions.rbegin()->second->settings();
    const std::string batching = s.max_batch > 1 ? ", batches of up to " + std::to_string(s.max_batch) + " rows (wait " +
                                                       std::to_string(s.batch_delay_us) + " us)"
                                                 : "";
    std::printf("baton serve: model %s, versions %s: %d instances, queue %d, deadline %lld ms%s\n", name.c_str(),
                versions.c_str(), s.instances, s.queue, static_cast<long long>(s.deadline_ms), batching.c_str());
    print_plans(*served, {});
  }
  std::unique_ptr<RestServer> rest;
  std::unique_ptr<GrpcServer> grpc;
  if (http_port >= 0) {
    rest = std::make_unique<RestServer>(service, rest_options);
    if (!rest->start(&error)) {
      std::fprintf(stderr, "baton serve: %s\n", error.c_str());
      return kExitError;
    }
    std::printf("baton serve: REST on %s:%u\n", rest_options.host.c_str(), rest->port());
  }
  if (grpc_port >= 0) {
    grpc = std::make_unique<GrpcServer>(service, grpc_options);
    if (!grpc->start(&error)) {
      std::fprintf(stderr, "baton serve: %s\n", error.c_str());
      return kExitError;
    }
    std::printf("baton serve: gRPC on %s:%u\n", grpc_options.host.c_str(), grpc->port());
  }
  std::printf("baton serve: ready\n");
  std::fflush(stdout);

  // SIGHUP and the poll reload the repository on this thread; SIGTERM or SIGINT ends the loop.
  int sig = 0;
  for (;;) {
    if (poll_secs > 0) {
      const timespec wait{poll_secs, 0};
      sig = sigtimedwait(&stop_signals, nullptr, &wait);
      if (sig < 0 && errno != EAGAIN) continue;  // EINTR
    } else if (sigwait(&stop_signals, &sig) != 0) {
      continue;
    }
    if (sig == SIGTERM || sig == SIGINT) break;
    const auto before = service.models();
    const std::vector<std::string> changes = service.reload();
    if (sig == SIGHUP && changes.empty()) std::printf("baton serve: SIGHUP: the repository has not changed\n");
    for (const std::string& line : changes) std::printf("baton serve: %s\n", line.c_str());
    for (const auto& [name, served] : *service.models()) {
      const auto old = before->find(name);
      print_plans(*served, old == before->end() ? nullptr : old->second.get());
    }
    std::fflush(stdout);
  }
  std::printf("baton serve: %s: draining requests in flight\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
  std::fflush(stdout);
  const auto drain = std::chrono::milliseconds(drain_ms);
  const auto started = Clock::now();
  if (rest) rest->stop_accepting();
  // Refuses new requests on every protocol; the gRPC shutdown waits for the RPCs that run.
  service.drain(std::chrono::milliseconds(0));  // from now on draining: no wait yet
  if (grpc) grpc->shutdown(drain);
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(drain - (Clock::now() - started));
  const bool drained = service.drain(std::max(left, std::chrono::milliseconds(0)));
  service.stop();
  if (rest) rest->stop();
  std::printf("baton serve: %s\n", drained ? "stopped" : "stopped; some requests were still running at the drain timeout");
  std::fflush(stdout);
  return kExitOk;
}
