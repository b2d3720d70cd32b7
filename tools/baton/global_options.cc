#include <cstdio>
#include <tuple>

#include "commands.h"

namespace baton::tool {

namespace po = boost::program_options;

boost::program_options::options_description global_options_description(GlobalOptions& g) {
  po::options_description d("global options");
  d.add_options()("config", po::value<std::string>(&g.config), "config file to read (replaces the search)")(
      "plugin-dir", po::value<std::vector<std::string>>(&g.plugin_dirs)->composing(),
      "search this folder for plugins first (repeatable)")(
      "delegate", po::value<std::vector<std::string>>(&g.delegates)->composing(),
      "delegate chain, in order (repeatable; replaces the configured order)")(
      "no-delegates", po::bool_switch(&g.no_delegates), "run every node on op packs")(
      "isolate", po::value<std::vector<std::string>>(&g.isolate)->composing(),
      "run this plugin in a process of its own, so that its crash or hang cannot take baton down "
      "(repeatable; 'all' for every plugin; like isolation = process in the config)")(
      "strict", po::bool_switch(&g.strict), "fail if any node would fall back to op packs")(
      "signature", po::value<std::string>(&g.signature),
      "run the subgraph of this signature key (see baton inspect); inputs and outputs in its order")(
      "threads", po::value<int>(&g.threads)->default_value(0),
      "threads for every plugin that does not set its own (0: the config's, else all cores)")(
      "max-model-bytes", po::value<std::string>(&g.max_model_bytes), "refuse larger model files (e.g. 64M; none: no limit)")(
      "max-tensor-bytes", po::value<std::string>(&g.max_tensor_bytes), "refuse models with a larger tensor (default: the machine's memory; none: no limit)")(
      "max-arena-bytes", po::value<std::string>(&g.max_arena_bytes), "refuse models whose arena is larger (default: the machine's memory; none: no limit)")(
      "verbose,v", po::bool_switch(&g.verbose), "print what is loaded and decided");
  return d;
}

namespace {

// --max-model-bytes, --max-tensor-bytes and --max-arena-bytes into the limits given (those not given keep
// their value); prints the error and returns false on a malformed one.
bool parse_limits(const GlobalOptions& g, size_t* model, size_t* tensor, size_t* arena) {
  for (auto [text, name, out] : {std::tuple{&g.max_model_bytes, "--max-model-bytes", model},
                                 std::tuple{&g.max_tensor_bytes, "--max-tensor-bytes", tensor},
                                 std::tuple{&g.max_arena_bytes, "--max-arena-bytes", arena}}) {
    if (text->empty()) continue;
    if (!baton_parse_byte_limit(text->c_str(), out)) {
      std::fprintf(stderr, "baton: %s '%s': expected a byte count, optionally with K, M or G, or none (0) for no limit\n",
                   name, text->c_str());
      return false;
    }
  }
  return true;
}

}  // namespace

std::unique_ptr<api::Environment> open_environment(const GlobalOptions& g, int* exit_code) {
  api::Environment::Settings s;
  s.config_path = g.config;
  s.plugin_dirs = g.plugin_dirs;
  s.delegates = g.delegates;
  for (const std::string& name : g.isolate) {
    if (name == "all") {
      s.isolate_all = true;
    } else {
      s.isolate.push_back(name);
    }
  }
  s.no_delegates = g.no_delegates;
  s.threads = g.threads;
  s.verbose = g.verbose;
  if (!parse_limits(g, &s.max_model_bytes, &s.max_tensor_bytes, &s.max_arena_bytes)) {
    *exit_code = kExitUsage;
    return nullptr;
  }
  try {
    return std::make_unique<api::Environment>(s);
  } catch (const api::Error& e) {
    std::fprintf(stderr, "baton: error: %s\n", e.what());
    *exit_code = kExitUsage;
    return nullptr;
  }
}

std::unique_ptr<api::Interpreter> open_interpreter(const GlobalOptions& g, api::Environment& env, const std::string& path,
                                                   int* exit_code) {
  try {
    return std::make_unique<api::Interpreter>(env, path, api::Interpreter::Options{g.signature, g.strict});
  } catch (const api::Error& e) {
    std::fprintf(stderr, "baton: error: %s\n", e.what());
    *exit_code = kExitError;
    return nullptr;
  }
}

bool int_range_option(const boost::program_options::variables_map& vm, const char* command,
                      std::optional<IntRange>* range) {
  if (!vm.count("int-range")) return true;
  const std::string text = vm["int-range"].as<std::string>();
  *range = parse_int_range(text);
  if (!*range) std::fprintf(stderr, "%s: --int-range wants LO:HI with LO <= HI, got '%s'\n", command, text.c_str());
  return range->has_value();
}

}  // namespace baton::tool
