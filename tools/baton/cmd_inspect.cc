// `baton inspect`: what a model contains, read without loading any plugin (baton_model_report).
#include <cstdio>

#include "commands.h"

namespace baton::tool {

int cmd_inspect(const GlobalOptions&, const boost::program_options::variables_map& vm) {
  if (!vm.count("model")) {
    std::fprintf(stderr, "baton inspect: no model given\nusage: baton inspect MODEL [--json]\n");
    return kExitUsage;
  }
  const bool json = vm.count("json") > 0;
  const char* report = baton_model_report(vm["model"].as<std::string>().c_str(), json ? BATON_PLAN_JSON : BATON_PLAN_TEXT);
  if (!report) {
    std::fprintf(stderr, "baton: error: %s\n", baton_last_error());
    return kExitError;
  }
  std::fputs(report, stdout);
  if (json) std::fputs("\n", stdout);
  return kExitOk;
}

}  // namespace baton::tool
