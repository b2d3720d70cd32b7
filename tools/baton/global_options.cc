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

std::shared_ptr<Environment> make_environment(const GlobalOptions& g, int* exit_code) {
  EnvironmentOptions eo;
  eo.config_path = g.config;
  eo.plugin_dirs = g.plugin_dirs;
  if (!g.delegates.empty()) eo.delegates = g.delegates;
  eo.no_delegates = g.no_delegates;
  for (const std::string& name : g.isolate) {
    if (name == "all") {
      eo.isolate_all = true;
    } else {
      eo.isolate.push_back(name);
    }
  }
  eo.threads = g.threads;
  eo.verbose = g.verbose;
  for (auto [text, name, out] : {std::tuple{&g.max_model_bytes, "--max-model-bytes", &eo.max_model_bytes},
                                 std::tuple{&g.max_tensor_bytes, "--max-tensor-bytes", &eo.max_tensor_bytes},
                                 std::tuple{&g.max_arena_bytes, "--max-arena-bytes", &eo.max_arena_bytes}}) {
    if (text->empty()) continue;
    if (!parse_byte_limit(*text, out)) {
      std::fprintf(stderr, "baton: %s '%s': expected a byte count, optionally with K, M or G, or none (0) for no limit\n",
                   name, text->c_str());
      *exit_code = kExitUsage;
      return nullptr;
    }
  }
  auto env = Environment::create(eo);
  if (!env) {
    std::fprintf(stderr, "baton: error: %s\n", env.error().c_str());
    *exit_code = kExitUsage;
    return nullptr;
  }
  return env.value();
}

std::unique_ptr<Interpreter> make_interpreter(const GlobalOptions& g, const std::shared_ptr<Environment>& env,
                                              const std::string& path, int* exit_code) {
  auto model = load_model_file(path, env->limits());
  if (!model) {
    std::fprintf(stderr, "baton: error: %s\n", model.error().c_str());
    *exit_code = kExitError;
    return nullptr;
  }
  InterpreterOptions o;
  o.strict = g.strict || env->config().strict;
  o.signature = g.signature;
  auto interp = Interpreter::create(env, model.value(), o);
  if (!interp) {
    std::fprintf(stderr, "baton: error: %s\n", interp.error().c_str());
    *exit_code = kExitError;
    return nullptr;
  }
  return std::move(interp.value());
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
