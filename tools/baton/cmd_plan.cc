// `baton plan`: where every node runs and why, as text, JSON, Graphviz DOT or SVG.
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "commands.h"

namespace baton::tool {

int cmd_plan(const GlobalOptions& g, const boost::program_options::variables_map& vm) {
  if (!vm.count("model")) {
    std::fprintf(stderr, "baton plan: no model given\nusage: baton plan MODEL [--format text|json|dot|svg]\n");
    return kExitUsage;
  }
  const std::string format = vm["format"].as<std::string>();
  if (format != "text" && format != "json" && format != "dot" && format != "svg") {
    std::fprintf(stderr, "baton plan: unknown --format '%s' (text, json, dot or svg)\n", format.c_str());
    return kExitUsage;
  }
  int code = kExitOk;
  auto env = open_environment(g, &code);
  if (!env) return code;
  auto interp = open_interpreter(g, *env, vm["model"].as<std::string>(), &code);
  if (!interp) return code;
  if (format == "text") {
    std::fputs(interp->plan(BATON_PLAN_TEXT).c_str(), stdout);
  } else if (format == "json") {
    std::printf("%s\n", interp->plan(BATON_PLAN_JSON).c_str());
  } else if (format == "dot") {
    std::fputs(interp->plan(BATON_PLAN_DOT).c_str(), stdout);
  } else {
    if (std::system("command -v dot >/dev/null 2>&1") != 0) {
      std::fprintf(stderr, "baton plan: --format svg needs Graphviz's `dot`, which is not installed "
                           "(Debian: apt-get install graphviz); --format dot prints the graph without it\n");
      return kExitError;
    }
    FILE* p = popen("dot -Tsvg", "w");
    if (!p) {
      std::fprintf(stderr, "baton plan: cannot start dot\n");
      return kExitError;
    }
    const std::string dot = interp->plan(BATON_PLAN_DOT);
    std::fwrite(dot.data(), 1, dot.size(), p);
    if (pclose(p) != 0) {
      std::fprintf(stderr, "baton plan: dot failed\n");
      return kExitError;
    }
  }
  return kExitOk;
}

}  // namespace baton::tool
