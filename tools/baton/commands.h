// The `baton` subcommands. Each gets the parsed global options and its own arguments and returns the
// process exit code: 0 success, 1 runtime or model error, 2 usage error.
#pragma once

#include <boost/program_options.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "baton/baton.hpp"
#include "input_gen.h"

namespace baton::tool {

constexpr int kExitOk = 0;
constexpr int kExitError = 1;
constexpr int kExitUsage = 2;

struct GlobalOptions {
  std::string config;
  std::vector<std::string> plugin_dirs;
  std::vector<std::string> delegates;
  bool no_delegates = false;
  std::vector<std::string> isolate;  // --isolate NAME|all
  bool verbose = false;
  bool strict = false;
  std::string signature;  // run this signature's subgraph
  int threads = 0;
  std::string max_model_bytes, max_tensor_bytes, max_arena_bytes;
};

// Options every subcommand accepts.
boost::program_options::options_description global_options_description(GlobalOptions& g);
// The environment (config + plugins) through baton's public C++ API (baton/baton.hpp); prints the error
// and returns null on failure (a usage error). And the model's interpreter in it (strict if --strict or
// the config says so; an error is a model error).
std::unique_ptr<api::Environment> open_environment(const GlobalOptions& g, int* exit_code);
std::unique_ptr<api::Interpreter> open_interpreter(const GlobalOptions& g, api::Environment& env, const std::string& path,
                                                   int* exit_code);
// `--int-range LO:HI` of `run` and `bench` into `range` (left empty without the option); prints the error,
// naming `command`, and returns false when the value is malformed.
bool int_range_option(const boost::program_options::variables_map& vm, const char* command,
                      std::optional<IntRange>* range);

int cmd_check_plugin(const GlobalOptions& g, const boost::program_options::variables_map& vm);
int cmd_bench(const GlobalOptions& g, const boost::program_options::variables_map& vm);
int cmd_inspect(const GlobalOptions& g, const boost::program_options::variables_map& vm);
int cmd_plugins(const GlobalOptions& g, const boost::program_options::variables_map& vm);
int cmd_plan(const GlobalOptions& g, const boost::program_options::variables_map& vm);
int cmd_run(const GlobalOptions& g, const boost::program_options::variables_map& vm);

}  // namespace baton::tool
