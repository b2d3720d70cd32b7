// `baton-serve` (also `baton serve`, which runs this program): models of a repository served over the
// Open Inference Protocol (KServe v2), REST and gRPC. See --help, and docs/manual.md's "Serving" section.
#include <signal.h>

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
      "                                        isolate (names, or all); an unknown key is an error\n\n"
      "REST: GET /v2/health/live, /v2/health/ready, /v2, /v2/models/NAME[/versions/V][/ready], /metrics;\n"
      "      POST /v2/models/NAME[/versions/V]/infer (JSON tensors, or the binary tensor data extension)\n"
      "gRPC: inference.GRPCInferenceService (ServerLive, ServerReady, ModelReady, ServerMetadata,\n"
      "      ModelMetadata, ModelInfer); server/proto/grpc_service.proto\n\n"
      "Each model version has `instances` interpreters and a queue of `queue` requests; a request that finds\n"
      "the queue full is refused at once (HTTP 503, gRPC UNAVAILABLE), one not done by its deadline fails\n"
      "(HTTP 504, gRPC DEADLINE_EXCEEDED). A bad request gets 400 / INVALID_ARGUMENT, an unknown model or\n"
      "version 404 / NOT_FOUND, a body over --max-body-bytes 413 before it is read.\n"
      "SIGTERM or SIGINT: stop listening, answer the requests in flight, exit 0.\n\n",
      kUsage);
  std::cout << options << "\n";
  std::printf("Exit status: 0 after a clean shutdown, 1 when a model or port cannot be used, 2 usage error.\n");
}

}  // namespace

int main(int argc, char** argv) {
  ServiceOptions service_options;
  RestOptions rest_options;
  GrpcOptions grpc_options;
  std::string repository;
  int http_port = 8000, grpc_port = 8001, drain_ms = 30000;
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
      ("verbose,v", "info messages on stderr")
      ("help,h", "show this help");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(options).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "baton serve: %s\n%s (try baton serve --help)\n", e.what(), kUsage);
    return kExitUsage;
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
  service_options.repository = repository;
  service_options.plugin_dirs = plugin_dirs;
  service_options.delegates = delegates;
  service_options.isolate = isolate;
  service_options.no_delegates = vm.count("no-delegates") > 0;
  service_options.verbose = vm.count("verbose") > 0;
  grpc_options.host = rest_options.host;
  grpc_options.max_message_bytes = rest_options.max_body_bytes;
  rest_options.port = static_cast<uint16_t>(std::max(0, http_port));
  grpc_options.port = static_cast<uint16_t>(std::max(0, grpc_port));

  // Every thread started from here on inherits the blocked signals; main waits for them with sigwait.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  InferenceService service;
  std::string error;
  if (!service.start(service_options, &error)) {
    std::fprintf(stderr, "baton serve: %s\n", error.c_str());
    return kExitError;
  }
  for (const auto& [name, served] : service.models()) {
    std::string versions;
    for (const auto& [v, mv] : served.versions) versions += (versions.empty() ? "" : ",") + std::to_string(v);
    const PoolSettings& s = served.versions.rbegin()->second->settings();
    std::printf("baton serve: model %s, versions %s: %d instances, queue %d, deadline %lld ms\n", name.c_str(),
                versions.c_str(), s.instances, s.queue, static_cast<long long>(s.deadline_ms));
    for (const auto& [v, mv] : served.versions) {
      std::printf("baton serve: model %s version %lld: plan: %s\n", name.c_str(), static_cast<long long>(v),
                  mv->plan_summary().c_str());
    }
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

  int sig = 0;
  sigwait(&stop_signals, &sig);
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
