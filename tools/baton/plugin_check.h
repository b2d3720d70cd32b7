// The conformance checker's engine (`baton check-plugin`, cmd_check_plugin.cc): runs one plugin on the
// project's one-op cases (tests/data/op-cases: a model, its inputs and native TFLite's outputs each) and
// says, case by case, whether the plugin passes, fails (with the largest difference) or refuses (with
// its reason), and what it found on the way: crashes, refusals without a reason, exceptions across the C
// boundary, invokes from two threads that disagree, a resized input the plugin does not re-prepare for.
// It drives the runtime through its public API (baton/baton.hpp) as any application does, and reads what
// the runtime decided from its documented reports (`baton plugins --json`, `baton plan --format json`).
#pragma once

#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "baton/baton.hpp"

namespace baton::tool {

// The runtime's JSON reports (environment, plan) as the checker reads them.
using Json = nlohmann::json;
// The string at `key` of a report object, or "" when it is absent or not a string.
inline std::string text_of(const Json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Something wrong the checker saw. `kind` names the rule: descriptor, crash, silent-refusal,
// exception, invoke-error, mismatch, threads, resize.
struct Finding {
  std::string kind;
  std::string op, type, case_name;  // empty for the descriptor's findings
  std::string message;
};

enum class CaseOutcome { Pass, Fail, Refused };

struct CaseResult {
  std::string name;
  std::string op;    // TFLite's op name, or the custom op's (composite's) name
  int32_t version = 1;
  std::string type;  // the element type of the node's first input (else its first output)
  CaseOutcome outcome = CaseOutcome::Pass;
  double max_diff = 0;  // Fail with a comparison: the largest |got - want| over the outputs
  std::string detail;   // Fail: what differed; Refused: the reason
  // Invokes from two threads at once: "same" when both gave the single run's bytes, "" when not run.
  std::string threads;
  // The resize check (see check_resize in plugin_check.cc): "checked", "ran", "refused", "n/a", or ""
  // when it did not run.
  std::string resize;
  std::vector<Finding> findings;
};

// One op declaration of the plugin, as its entry in the environment report gives it.
struct DeclaredOp {
  std::string op;          // TFLite's op name, a custom op's name, or a composite's name
  bool custom = false;     // a custom op (its own name)
  bool composite = false;  // a STABLEHLO_COMPOSITE (its decomposition's name)
  int32_t min_version = 1, max_version = 1;
  std::string text() const;  // "CONV_2D v1-6", "Atan v1", "STABLEHLO_COMPOSITE 'odml.rms_norm' v1"
};

// The plugin under test, from the environment report's entry for it (`baton plugins --json`).
struct PluginFacts {
  std::string name, version, description, kind, abi_version, name_from_file;
  bool created = true;         // a delegate that started (init, devices)
  bool selects_nodes = false;  // a delegate with select_nodes
  std::vector<DeclaredOp> ops;
  std::vector<std::pair<std::string, std::string>> options;  // name, help
  bool delegate() const { return kind == "delegate"; }
  // Whether it declares the node's op at the node's version.
  bool declares(const api::Model::Node& node) const;
};

// Warnings the runtime logged since the last case; written from any thread.
struct LogLines {
  std::mutex mutex;
  std::vector<std::string> lines;
  void add(const std::string& line) {
    std::lock_guard<std::mutex> lock(mutex);
    lines.push_back(line);
  }
  std::string text() {
    std::lock_guard<std::mutex> lock(mutex);
    std::string s;
    for (const std::string& line : lines) s += line + "\n";
    return s;
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mutex);
    lines.clear();
  }
};

// What the checker runs against.
struct CheckTarget {
  std::shared_ptr<api::Environment> env;
  // The builtin pack alone, in this process: the reference of the resize check's doubled inputs (null:
  // that part of the check has no reference).
  std::shared_ptr<api::Environment> reference;
  std::string plugin;    // the name the plugin declares
  bool delegate = false;
  double tolerance = 1e-5;  // float outputs: |got - want| <= tolerance * max |want|
  std::shared_ptr<LogLines> log;
};

// The subject of a case for a plugin: the op, version and type its first node of interest has, and
// whether the plugin declares what the case needs (an op pack: every node but the runtime's own; a
// delegate: any of them).
struct CaseSubject {
  bool applies = false;
  std::string op;
  int32_t version = 1;
  std::string type;
};
CaseSubject case_subject(const std::vector<api::Model::Node>& nodes, const PluginFacts& plugin);

// Runs the case in folder `dir` (model.tflite, in_N.npy, out_N.npy) of `model` (loaded in target.env),
// then, when it passed, the two-thread and the resize checks. `stateful`: the model's outputs depend on
// earlier invokes or on chance (no resize check).
CaseResult run_case(const CheckTarget& target, const std::string& dir, const std::string& name,
                    const api::Model& model, bool stateful, const CaseSubject& subject);

}  // namespace baton::tool
