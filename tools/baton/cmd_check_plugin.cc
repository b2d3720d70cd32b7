// `baton check-plugin FILE.so`: the conformance checker a plugin's author runs before shipping it. It
// loads the plugin as the runtime does, in a baton-plugin-host child of its own (so a crash is a finding,
// not the end of the check), with nothing else but the builtin pack beside a delegate; checks what the
// registry checks of every descriptor and a little more; then runs every one-op case whose op and version
// the plugin declares (plugin_check.h) and prints a table per op and type. Exit status 1 on any finding.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "commands.h"
#include "json_writer.h"
#include "plugin_check.h"

namespace baton::tool {

namespace {

namespace fs = std::filesystem;

// A scratch folder for the run: the plugin folders the environments read and the crash journal's state
// folder ($XDG_STATE_HOME for every child too), so the user's journal is never written. Removed at exit.
struct Scratch {
  fs::path root;
  Scratch() {
    std::string pattern = (fs::temp_directory_path() / "baton-check-plugin-XXXXXX").string();
    if (::mkdtemp(pattern.data())) root = pattern;
  }
  ~Scratch() {
    std::error_code ec;
    if (!root.empty()) fs::remove_all(root, ec);
  }
};

// The op cases installed with the SDK, or the source tree's when this tool runs from the build tree.
std::string default_cases_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && exe.string().rfind(std::string(BATON_BUILD_ROOT) + "/", 0) == 0) {
    return std::string(BATON_SOURCE_ROOT) + "/tests/data/op-cases";
  }
  return BATON_OP_CASES_INSTALLED;
}

// The builtin pack, which runs what a delegate under test refuses: found where the runtime looks.
std::string find_builtin_pack(const GlobalOptions& g) {
  std::vector<std::string> dirs = g.plugin_dirs;
  for (const std::string& d : default_plugin_dirs()) dirs.push_back(d);
  for (const std::string& d : dirs) {
    const fs::path p = fs::path(d) / "libbaton_builtin.so";
    if (fs::exists(p)) return p.string();
  }
  return "";
}

// Rules of the plugin guide the registry does not enforce at load: a plugin that breaks them still
// loads, but tools and users cannot tell what it is or does.
std::vector<Finding> descriptor_findings(const LoadedPlugin& p, const std::string& file) {
  std::vector<Finding> out;
  auto add = [&](const std::string& message) { out.push_back({"descriptor", "", "", "", message}); };
  if (p.version.empty()) add("the descriptor gives no version");
  if (p.description.empty()) add("the descriptor gives no description");
  for (const OptionDecl& o : p.options) {
    if (o.help.empty()) add("option '" + o.name + "' has no help text");
  }
  if (p.kind == BATON_PLUGIN_OP_PACK && p.ops.empty()) add("an op pack that declares no op");
  if (p.kind == BATON_PLUGIN_DELEGATE && p.ops.empty() && !p.delegate.select_nodes) {
    add("a delegate that declares no op and has no select_nodes");
  }
  if (plugin_name_from_file(file) != p.name && "lib" + p.name != fs::path(file).stem().string()) {
    // Config sections and isolation by name find a plugin's file by its name (the manual's rule).
    std::string n = plugin_name_from_file(file);
    std::replace(n.begin(), n.end(), '_', '-');
    std::string declared = p.name;
    std::replace(declared.begin(), declared.end(), '_', '-');
    if (n != declared) add("the file name says '" + plugin_name_from_file(file) + "' but the plugin is named '" + p.name +
                           "' (name the file lib" + p.name + ".so)");
  }
  return out;
}

// The kind of finding a skipped file's reason is.
std::string load_finding_kind(const std::string& reason) {
  if (reason.find("init failed") != std::string::npos) return "init";
  if (reason.find("killed by") != std::string::npos || reason.find("exited with status") != std::string::npos ||
      reason.find("did not answer") != std::string::npos) {
    return "crash";
  }
  if (reason.find("no entry symbol") != std::string::npos || reason.find("not a shared object") != std::string::npos) {
    return "not-a-plugin";
  }
  return "descriptor";
}

struct Row {
  std::string op, type;
  std::set<int32_t> versions;
  int cases = 0, pass = 0, fail = 0, refused = 0;
  int threads_ok = 0, threads_fail = 0;
  int resized = 0, resize_refused = 0, resize_fail = 0;
  double worst = -1;
  std::string worst_text, refusal;
};

std::string versions_text(const std::set<int32_t>& v) {
  std::string s;
  for (int32_t x : v) s += (s.empty() ? "v" : ",") + std::to_string(x);
  return s;
}

std::vector<Row> table(const std::vector<CaseResult>& results) {
  std::map<std::pair<std::string, std::string>, Row> rows;
  for (const CaseResult& r : results) {
    Row& row = rows[{r.op, r.type}];
    row.op = r.op;
    row.type = r.type;
    row.versions.insert(r.version);
    ++row.cases;
    if (r.outcome == CaseOutcome::Pass) ++row.pass;
    if (r.outcome == CaseOutcome::Refused) {
      ++row.refused;
      if (row.refusal.empty()) row.refusal = r.detail;
    }
    if (r.outcome == CaseOutcome::Fail) {
      ++row.fail;
      if (r.max_diff > row.worst) {
        row.worst = r.max_diff;
        row.worst_text = r.name + ": " + r.detail;
      }
    }
    if (r.threads == "same") ++row.threads_ok;
    if (r.resize == "checked" || r.resize == "ran") ++row.resized;
    if (r.resize == "refused") ++row.resize_refused;
    for (const Finding& f : r.findings) {
      row.threads_fail += f.kind == "threads";
      row.resize_fail += f.kind == "resize";
    }
  }
  std::vector<Row> out;
  for (auto& [key, row] : rows) out.push_back(std::move(row));
  return out;
}

// A reason as long as a delegate's list of what it takes is cut in the table (--json keeps it whole).
std::string shortened(const std::string& text) { return text.size() <= 100 ? text : text.substr(0, 97) + "..."; }

std::string row_result(const Row& row) {
  if (row.fail) return "FAIL " + row.worst_text;
  if (row.refused && row.pass) return "pass; refused " + std::to_string(row.refused) + ": " + shortened(row.refusal);
  if (row.refused) return "refused: " + shortened(row.refusal);
  return "pass";
}

}  // namespace

int cmd_check_plugin(const GlobalOptions& g, const boost::program_options::variables_map& vm) {
  if (!vm.count("plugin")) {
    std::fprintf(stderr, "baton check-plugin: no plugin file given\nusage: baton check-plugin FILE.so [--json]\n");
    return kExitUsage;
  }
  std::error_code ec;
  const fs::path file = fs::absolute(vm["plugin"].as<std::string>(), ec);
  if (ec || !fs::is_regular_file(file)) {
    std::fprintf(stderr, "baton check-plugin: %s is not a file\n", vm["plugin"].as<std::string>().c_str());
    return kExitUsage;
  }
  const bool json = vm.count("json") > 0;
  const bool in_process = vm.count("in-process") > 0;
  const double tolerance = vm["tolerance"].as<double>();
  std::vector<std::string> case_dirs = vm.count("cases") ? vm["cases"].as<std::vector<std::string>>()
                                                          : std::vector<std::string>{default_cases_dir()};
  std::set<std::string> only_ops;
  if (vm.count("ops")) {
    std::string list = vm["ops"].as<std::string>();
    for (size_t at = 0; at <= list.size();) {
      const size_t comma = std::min(list.find(',', at), list.size());
      if (comma > at) only_ops.insert(list.substr(at, comma - at));
      at = comma + 1;
    }
  }
  for (const std::string& d : case_dirs) {
    if (!fs::is_directory(d)) {
      std::fprintf(stderr, "baton check-plugin: no case folder %s (--cases DIR: a folder of one-op cases, each a "
                           "folder with model.tflite, in_N.npy and out_N.npy)\n", d.c_str());
      return kExitUsage;
    }
  }

  Scratch scratch;
  if (scratch.root.empty() || !fs::create_directory(scratch.root / "state", ec) ||
      !fs::create_directory(scratch.root / "plugins", ec)) {
    std::fprintf(stderr, "baton check-plugin: cannot make a scratch folder in %s\n", fs::temp_directory_path().c_str());
    return kExitError;
  }
  ::setenv("XDG_STATE_HOME", (scratch.root / "state").c_str(), 1);
  auto log = std::make_shared<std::vector<std::string>>();
  auto options = [&](const fs::path& dir) {
    EnvironmentOptions eo;
    eo.plugin_dirs = {dir.string()};
    eo.use_environment_variables = false;
    eo.use_default_dirs = false;
    eo.config_path = g.config;
    eo.read_config = !g.config.empty();
    eo.state_dir = (scratch.root / "state").string();
    eo.threads = g.threads;
    eo.isolate_all = !in_process;
    eo.no_delegates = true;
    const bool verbose = g.verbose;
    eo.log = [log, verbose](baton_log_level level, const std::string& line) {
      if (level >= BATON_LOG_WARNING) log->push_back(line);
      if (verbose) std::fprintf(stderr, "baton: %s\n", line.c_str());
    };
    return eo;
  };

  // First the plugin alone, as the registry reads it.
  fs::create_symlink(file, scratch.root / "plugins" / file.filename(), ec);
  auto env = Environment::create(options(scratch.root / "plugins"));
  if (!env) {
    std::fprintf(stderr, "baton check-plugin: %s\n", env.error().c_str());
    return kExitUsage;
  }
  std::vector<Finding> findings;
  const LoadedPlugin* plugin = nullptr;
  for (const auto& p : env.value()->registry().plugins()) plugin = p.get();
  for (const SkippedPlugin& s : env.value()->registry().skipped()) {
    findings.push_back({load_finding_kind(s.reason), "", "", "", s.reason});
  }
  if (plugin) {
    for (Finding& f : descriptor_findings(*plugin, file.string())) findings.push_back(std::move(f));
  }

  CheckTarget target;
  target.env = env.value();
  target.log = log;
  target.tolerance = tolerance;
  std::string builtin;
  if (plugin && plugin->kind == BATON_PLUGIN_DELEGATE) {
    // Again with the builtin pack beside it, so what it refuses still runs, and the delegate alone in the
    // chain. Its file is linked under its own name, which isolation by name reads.
    builtin = find_builtin_pack(g);
    if (builtin.empty()) {
      std::fprintf(stderr, "baton check-plugin: a delegate needs the builtin pack (libbaton_builtin.so) beside it, "
                           "and none is in the plugin folders (--plugin-dir DIR)\n");
      return kExitUsage;
    }
    const std::string name = plugin->name;
    fs::create_directory(scratch.root / "chain", ec);
    fs::create_symlink(file, scratch.root / "chain" / ("lib" + name + ".so"), ec);
    fs::create_symlink(builtin, scratch.root / "chain" / "libbaton_builtin.so", ec);
    EnvironmentOptions eo = options(scratch.root / "chain");
    eo.isolate_all = false;
    if (!in_process) eo.isolate = {name};
    eo.no_delegates = false;
    eo.delegates = std::vector<std::string>{name};
    target.env.reset();
    env = Environment::create(eo);
    if (!env) {
      std::fprintf(stderr, "baton check-plugin: %s\n", env.error().c_str());
      return kExitUsage;
    }
    target.env = env.value();
    plugin = target.env->registry().find(name);
    if (plugin && !plugin->created) {
      std::string why = "the delegate could not be started";
      for (const std::string& line : *log) {
        if (line.find("left out of the chain") != std::string::npos) why = line;
      }
      findings.push_back({"init", "", "", "", why});
    }
  }

  // The builtin pack alone, in this process: the reference of the resize check's doubled inputs.
  if (builtin.empty()) builtin = find_builtin_pack(g);
  if (!builtin.empty()) {
    fs::create_directory(scratch.root / "reference", ec);
    fs::create_symlink(builtin, scratch.root / "reference" / "libbaton_builtin.so", ec);
    EnvironmentOptions eo = options(scratch.root / "reference");
    eo.isolate_all = false;
    eo.read_config = false;
    eo.config_path.clear();
    eo.log = [](baton_log_level, const std::string&) {};
    if (auto reference = Environment::create(eo)) target.reference = reference.value();
  }

  std::vector<CaseResult> results;
  std::set<std::string> covered;
  if (plugin && plugin->kind != BATON_PLUGIN_LOADER && (plugin->kind == BATON_PLUGIN_OP_PACK || plugin->created)) {
    target.plugin = plugin->name;
    target.delegate = plugin->kind == BATON_PLUGIN_DELEGATE;
    for (const std::string& root : case_dirs) {
      std::vector<fs::path> cases;
      for (const auto& e : fs::directory_iterator(root, ec)) {
        if (fs::exists(e.path() / "model.tflite")) cases.push_back(e.path());
      }
      std::sort(cases.begin(), cases.end());
      for (const fs::path& dir : cases) {
        auto model = load_model_file((dir / "model.tflite").string(), target.env->limits());
        if (!model) continue;  // a case this runtime cannot load is no plugin's
        const CaseSubject subject = case_subject(*model.value(), *plugin);
        if (!subject.applies) continue;
        if (!only_ops.empty() && !only_ops.count(subject.op)) continue;
        covered.insert(subject.op);
        results.push_back(run_case(target, dir.string(), dir.filename().string(), model.value(), subject));
        if (!json && g.verbose) std::fprintf(stderr, "baton check-plugin: %s done\n", dir.filename().c_str());
      }
    }
  }
  for (const CaseResult& r : results) findings.insert(findings.end(), r.findings.begin(), r.findings.end());
  const std::vector<Row> rows = table(results);
  std::vector<std::string> uncovered;
  if (plugin) {
    for (const OpDecl& op : plugin->ops) {
      const std::string name = op.code == BATON_OP_CUSTOM || op.code == BATON_OP_STABLEHLO_COMPOSITE ? op.custom_name : op_name(op.code);
      if (!covered.count(name) && (only_ops.empty() || only_ops.count(name))) uncovered.push_back(op.describe());
    }
  }
  const bool passed = findings.empty();
  int pass = 0, fail = 0, refused = 0;
  for (const CaseResult& r : results) {
    pass += r.outcome == CaseOutcome::Pass;
    fail += r.outcome == CaseOutcome::Fail;
    refused += r.outcome == CaseOutcome::Refused;
  }

  if (json) {
    JsonWriter j;
    j.begin_object();
    j.field("file", file.string()).field("passed", passed);
    j.key("plugin");
    if (plugin) {
      j.begin_object().field("name", plugin->name).field("version", plugin->version).field("kind", plugin->kind_name());
      j.field("abi_version", std::to_string(plugin->abi_major) + "." + std::to_string(plugin->abi_minor));
      j.field("isolation", in_process ? "in-process" : "process").end_object();
    } else {
      j.null();
    }
    j.array_of("cases_dirs", case_dirs).field("tolerance", tolerance);
    j.field("cases", static_cast<int64_t>(results.size())).field("pass", pass).field("fail", fail).field("refused", refused);
    j.key("rows").begin_array();
    for (const Row& row : rows) {
      j.begin_object().field("op", row.op).field("type", row.type);
      j.key("versions").begin_array();
      for (int32_t v : row.versions) j.value(v);
      j.end_array();
      j.field("cases", row.cases).field("pass", row.pass).field("fail", row.fail).field("refused", row.refused);
      j.field("result", row.fail ? "fail" : row.pass ? "pass" : "refused");
      j.key("max_diff");
      if (row.fail) j.value(row.worst); else j.null();
      j.field("fail_detail", row.worst_text).field("refusal", row.refusal);
      j.field("threads_same", row.threads_ok).field("threads_fail", row.threads_fail);
      j.field("resized", row.resized).field("resize_refused", row.resize_refused).field("resize_fail", row.resize_fail);
      j.end_object();
    }
    j.end_array();
    j.key("results").begin_array();
    for (const CaseResult& r : results) {
      j.begin_object().field("case", r.name).field("op", r.op).field("version", r.version).field("type", r.type);
      j.field("outcome", r.outcome == CaseOutcome::Pass ? "pass" : r.outcome == CaseOutcome::Fail ? "fail" : "refused");
      j.field("max_diff", r.max_diff).field("detail", r.detail).field("threads", r.threads).field("resize", r.resize);
      j.end_object();
    }
    j.end_array();
    j.key("findings").begin_array();
    for (const Finding& f : findings) {
      j.begin_object().field("kind", f.kind).field("op", f.op).field("type", f.type).field("case", f.case_name);
      j.field("message", f.message).end_object();
    }
    j.end_array();
    j.array_of("declared_without_cases", uncovered);
    j.end_object();
    std::printf("%s\n", j.str().c_str());
    return passed ? kExitOk : kExitError;
  }

  std::printf("plugin: %s\n", file.c_str());
  if (plugin) {
    std::printf("  %s %s (%s, ABI %u.%u), run %s\n", plugin->name.c_str(), plugin->version.c_str(), plugin->kind_name(),
                plugin->abi_major, plugin->abi_minor, in_process ? "in this process (--in-process)" : "in a process of its own");
    if (plugin->kind == BATON_PLUGIN_DELEGATE) std::printf("  with the builtin pack (%s) for the nodes it refuses\n", builtin.c_str());
  }
  std::string dirs;
  for (const std::string& d : case_dirs) dirs += (dirs.empty() ? "" : ", ") + d;
  std::printf("cases: %zu of %s (floats within %g of the largest reference value, other types exact)\n\n",
              results.size(), dirs.c_str(), tolerance);
  if (!rows.empty()) {
    std::printf("%-28s %-10s %-9s %5s %5s %5s %7s  %-7s %-7s %s\n", "OP", "VERSIONS", "TYPE", "CASES", "PASS", "FAIL",
                "REFUSED", "THREADS", "RESIZE", "RESULT");
    for (const Row& row : rows) {
      const std::string threads = row.threads_fail ? "FAIL" : row.threads_ok ? "same" : "-";
      const std::string resize = row.resize_fail ? "FAIL" : row.resized ? "ok" : row.resize_refused ? "refused" : "n/a";
      std::printf("%-28s %-10s %-9s %5d %5d %5d %7d  %-7s %-7s %s\n", row.op.c_str(), versions_text(row.versions).c_str(),
                  row.type.c_str(), row.cases, row.pass, row.fail, row.refused, threads.c_str(), resize.c_str(),
                  row_result(row).c_str());
    }
    std::printf("\n");
  }
  if (!uncovered.empty()) {
    std::string list;
    for (const std::string& u : uncovered) list += (list.empty() ? "" : ", ") + u;
    std::printf("declared, but no case runs it: %s\n\n", list.c_str());
  }
  std::printf("%zu case(s): %d pass, %d fail, %d refused with a reason\n", results.size(), pass, fail, refused);
  if (passed) {
    std::printf("check-plugin: PASS\n");
    return kExitOk;
  }
  std::printf("%zu finding(s):\n", findings.size());
  for (const Finding& f : findings) {
    std::string where = f.op.empty() ? "" : f.op + " " + f.type + " (" + f.case_name + "): ";
    std::printf("  [%s] %s%s\n", f.kind.c_str(), where.c_str(), f.message.c_str());
  }
  std::printf("check-plugin: FAIL\n");
  return kExitError;
}

}  // namespace baton::tool
