// `baton plugins`: what was loaded from where, what each plugin offers, and what was skipped and why (the
// environment's report, baton_environment_report).
#include <cstdio>

#include "commands.h"

namespace baton::tool {

int cmd_plugins(const GlobalOptions& g, const boost::program_options::variables_map& vm) {
  int code = kExitOk;
  auto env = open_environment(g, &code);
  if (!env) return code;
  const std::string report = env->report(vm.count("json") ? BATON_PLAN_JSON : BATON_PLAN_TEXT);
  std::fputs(report.c_str(), stdout);
  if (vm.count("json")) std::fputs("\n", stdout);
  return kExitOk;
}

}  // namespace baton::tool
