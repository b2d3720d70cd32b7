// `baton check-plugin FILE.so`: the conformance checker a plugin's author runs before shipping it. It
// loads the plugin as the runtime does, in a baton-plugin-host child of its own (so a crash is a finding,
// not the end of the check), with nothing else but the builtin pack beside a delegate; checks what the
// registry checks of every descriptor and a little more; then runs every one-op case whose op and version
// the plugin declares (plugin_check.h) and prints a table per op and type. Exit status 1 on any finding.
// Like every command it goes through the public API: what the registry read of the plugin comes from the
// environment report (`baton plugins --json`).
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
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

// An environment of the checker's: only the folders and the config (a file: the checker's empty one when
// the user gave none) its settings name, nothing of BATON_PLUGIN_PATH or BATON_CONFIG (unset by the
// command) or the default folders unless asked; warnings into `log` (when given), every message on stderr
// with --verbose.
std::shared_ptr<api::Environment> open(api::Environment::Settings s, const std::shared_ptr<LogLines>& log, bool verbose) {
  s.log = [log, verbose](baton_log_level level, const char* message) {
    if (log && level >= BATON_LOG_WARNING) log->add(message);
    if (verbose) std::fprintf(stderr, "baton: %s\n", message);
  };
  return std::make_shared<api::Environment>(s);
}

// The plugin's entry in an environment report, or null.
const Json* plugin_entry(const Json& report, const std::string& name) {
  for (const Json& p : report.at("plugins")) {
    if (text_of(p, "name") == name) return &p;
  }
  return nullptr;
}

PluginFacts facts_of(const Json& p) {
  PluginFacts f;
  f.name = text_of(p, "name");
  f.version = text_of(p, "version");
  f.description = text_of(p, "description");
  f.kind = text_of(p, "kind");
  f.abi_version = text_of(p, "abi_version");
  f.name_from_file = text_of(p, "name_from_file");
  f.created = p.value("created", true);
  f.selects_nodes = p.value("selects_nodes", false);
  for (const Json& op : p.at("ops")) {
    DeclaredOp d;
    d.custom = op.value("custom", false);
    d.composite = op.contains("composite");
    d.op = d.composite ? text_of(op, "composite") : text_of(op, "op");
    d.min_version = op.value("min_version", 1);
    d.max_version = op.value("max_version", 1);
    f.ops.push_back(d);
  }
  for (const Json& o : p.at("options")) f.options.emplace_back(text_of(o, "name"), text_of(o, "help"));
  return f;
}

// Rules of the plugin guide the registry does not enforce at load: a plugin that breaks them still
// loads, but tools and users cannot tell what it is or does.
std::vector<Finding> descriptor_findings(const PluginFacts& p) {
  std::vector<Finding> out;
  auto add = [&](const std::string& message) { out.push_back({"descriptor", "", "", "", message}); };
  if (p.version.empty()) add("the descriptor gives no version");
  if (p.description.empty()) add("the descriptor gives no description");
  for (const auto& [name, help] : p.options) {
    if (help.empty()) add("option '" + name + "' has no help text");
  }
  if (p.kind == "op-pack" && p.ops.empty()) add("an op pack that declares no op");
  if (p.delegate() && p.ops.empty() && !p.selects_nodes) add("a delegate that declares no op and has no select_nodes");
  // Config sections and isolation by name find a plugin's file by its name (the manual's rule).
  std::string declared = p.name;
  std::replace(declared.begin(), declared.end(), '_', '-');
  if (!p.name_from_file.empty() && p.name_from_file != declared) {
    add("the file name says '" + p.name_from_file + "' but the plugin is named '" + p.name + "' (name the file lib" + p.name + ".so)");
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
  for (int32_t x : v) {
    s += s.empty() ? 'v' : ',';
    s += std::to_string(x);  // appended apart: a literal + to_string() trips a false -Wrestrict in GCC 12
  }
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
  const fs::path no_config = scratch.root / "empty.conf";
  if (scratch.root.empty() || !fs::create_directory(scratch.root / "state", ec) ||
      !fs::create_directory(scratch.root / "plugins", ec) || !std::ofstream(no_config)) {
    std::fprintf(stderr, "baton check-plugin: cannot make a scratch folder in %s\n", fs::temp_directory_path().c_str());
    return kExitError;
  }
  // Every environment of the check reads only the folders and the config named here; its crash journals
  // (and every plugin child's) go to the scratch folder.
  ::setenv("XDG_STATE_HOME", (scratch.root / "state").c_str(), 1);
  ::unsetenv("BATON_PLUGIN_PATH");
  ::unsetenv("BATON_CONFIG");
  auto log = std::make_shared<LogLines>();
  auto spec = [&](const fs::path& dir) {
    api::Environment::Settings s;
    s.plugin_dirs = {dir.string()};
    s.config_path = g.config.empty() ? no_config.string() : g.config;
    s.no_default_dirs = true;
    s.threads = g.threads;
    s.isolate_all = !in_process;
    s.no_delegates = true;
    return s;
  };

  // First the plugin alone, as the registry reads it.
  fs::create_symlink(file, scratch.root / "plugins" / file.filename(), ec);
  std::shared_ptr<api::Environment> env;
  Json report;
  try {
    env = open(spec(scratch.root / "plugins"), log, g.verbose);
    report = Json::parse(env->report(BATON_PLAN_JSON));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "baton check-plugin: %s\n", e.what());
    return kExitUsage;
  }
  std::vector<Finding> findings;
  std::optional<PluginFacts> plugin;
  for (const Json& p : report.at("plugins")) plugin = facts_of(p);
  for (const Json& s : report.at("skipped")) {
    const std::string reason = text_of(s, "reason");
    findings.push_back({load_finding_kind(reason), "", "", "", reason});
  }
  if (plugin) {
    for (Finding& f : descriptor_findings(*plugin)) findings.push_back(std::move(f));
  }

  // The builtin pack, which runs what a delegate under test refuses and is the resize check's reference:
  // found where the runtime looks (--plugin-dir, then the default folders).
  std::string builtin;
  try {
    api::Environment::Settings search = spec(scratch.root / "none");
    search.plugin_dirs = g.plugin_dirs;
    search.no_default_dirs = false;
    search.isolate_all = false;
    search.config_path = no_config.string();
    const Json found = Json::parse(open(search, nullptr, false)->report(BATON_PLAN_JSON));
    if (const Json* b = plugin_entry(found, "builtin")) builtin = text_of(*b, "path");
  } catch (const std::exception&) {
    // no builtin pack to be found: said below where it is needed
  }

  CheckTarget target;
  target.env = env;
  target.log = log;
  target.tolerance = tolerance;
  if (plugin && plugin->delegate()) {
    // Again with the builtin pack beside it, so what it refuses still runs, and the delegate alone in the
    // chain. Its file is linked under its own name, which isolation by name reads.
    if (builtin.empty()) {
      std::fprintf(stderr, "baton check-plugin: a delegate needs the builtin pack (libbaton_builtin.so) beside it, "
                           "and none is in the plugin folders (--plugin-dir DIR)\n");
      return kExitUsage;
    }
    const std::string name = plugin->name;
    fs::create_directory(scratch.root / "chain", ec);
    fs::create_symlink(file, scratch.root / "chain" / ("lib" + name + ".so"), ec);
    fs::create_symlink(builtin, scratch.root / "chain" / "libbaton_builtin.so", ec);
    // The files a plugin loads from beside itself (vulkan's shader compiler module and device probe)
    // come along: every file of its folder but other shared objects.
    for (const auto& e : fs::directory_iterator(fs::path(file).parent_path(), ec)) {
      const fs::path& f = e.path();
      if (!e.is_regular_file() || f.extension() == ".so" || f == fs::path(file)) continue;
      fs::create_symlink(f, scratch.root / "chain" / f.filename(), ec);
    }
    api::Environment::Settings chain = spec(scratch.root / "chain");
    chain.isolate_all = false;
    if (!in_process) chain.isolate = {name};
    chain.no_delegates = false;
    chain.delegates = {name};
    target.env.reset();
    env.reset();
    try {
      target.env = open(chain, log, g.verbose);
      report = Json::parse(target.env->report(BATON_PLAN_JSON));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "baton check-plugin: %s\n", e.what());
      return kExitUsage;
    }
    const Json* entry = plugin_entry(report, name);
    if (entry) plugin = facts_of(*entry);
    if (entry && !plugin->created) {
      std::string why = "the delegate could not be started";
      const std::string logged = log->text();
      for (size_t at = 0; at < logged.size();) {
        const size_t end = std::min(logged.find('\n', at), logged.size());
        const std::string line = logged.substr(at, end - at);
        if (line.find("left out of the chain") != std::string::npos) why = line;
        at = end + 1;
      }
      findings.push_back({"init", "", "", "", why});
    }
  }

  // The builtin pack alone, in this process: the reference of the resize check's doubled inputs.
  if (!builtin.empty()) {
    fs::create_directory(scratch.root / "reference", ec);
    fs::create_symlink(builtin, scratch.root / "reference" / "libbaton_builtin.so", ec);
    api::Environment::Settings reference = spec(scratch.root / "reference");
    reference.isolate_all = false;
    reference.config_path = no_config.string();
    try {
      target.reference = open(reference, nullptr, false);
    } catch (const std::exception&) {
      // the resize check runs without a reference
    }
  }

  std::vector<CaseResult> results;
  std::set<std::string> covered;
  if (plugin && plugin->kind != "loader" && (plugin->kind == "op-pack" || plugin->created)) {
    target.plugin = plugin->name;
    target.delegate = plugin->delegate();
    for (const std::string& root : case_dirs) {
      std::vector<fs::path> cases;
      for (const auto& e : fs::directory_iterator(root, ec)) {
        if (fs::exists(e.path() / "model.tflite")) cases.push_back(e.path());
      }
      std::sort(cases.begin(), cases.end());
      for (const fs::path& dir : cases) {
        std::unique_ptr<api::Model> model;
        try {
          model = std::make_unique<api::Model>(*target.env, (dir / "model.tflite").string());
        } catch (const api::Error&) {
          continue;  // a case this runtime cannot load is no plugin's
        }
        const std::vector<api::Model::Node> nodes = model->nodes();
        const CaseSubject subject = case_subject(nodes, *plugin);
        if (!subject.applies) continue;
        if (!only_ops.empty() && !only_ops.count(subject.op)) continue;
        const bool stateful = std::any_of(nodes.begin(), nodes.end(), [](const api::Model::Node& n) { return n.stateful || n.runtime; });
        covered.insert(subject.op);
        results.push_back(run_case(target, dir.string(), dir.filename().string(), *model, stateful, subject));
        if (!json && g.verbose) std::fprintf(stderr, "baton check-plugin: %s done\n", dir.filename().c_str());
      }
    }
  }
  for (const CaseResult& r : results) findings.insert(findings.end(), r.findings.begin(), r.findings.end());
  const std::vector<Row> rows = table(results);
  std::vector<std::string> uncovered;
  if (plugin) {
    for (const DeclaredOp& op : plugin->ops) {
      if (!covered.count(op.op) && (only_ops.empty() || only_ops.count(op.op))) uncovered.push_back(op.text());
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
      j.begin_object().field("name", plugin->name).field("version", plugin->version).field("kind", plugin->kind);
      j.field("abi_version", plugin->abi_version);
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
    std::printf("  %s %s (%s, ABI %s), run %s\n", plugin->name.c_str(), plugin->version.c_str(), plugin->kind.c_str(),
                plugin->abi_version.c_str(), in_process ? "in this process (--in-process)" : "in a process of its own");
    if (plugin->delegate()) std::printf("  with the builtin pack (%s) for the nodes it refuses\n", builtin.c_str());
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
