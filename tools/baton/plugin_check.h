// The conformance checker's engine (`baton check-plugin`, cmd_check_plugin.cc): runs one plugin on the
// project's one-op cases (tests/data/op-cases: a model, its inputs and native TFLite's outputs each) and
// says, case by case, whether the plugin passes, fails (with the largest difference) or refuses (with
// its reason), and what it found on the way: crashes, refusals without a reason, exceptions across the C
// boundary, invokes from two threads that disagree, a resized input the plugin does not re-prepare for.
// It drives the runtime's own Environment and Interpreter: no second loader, no second executor.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "environment.h"
#include "model.h"

namespace baton::tool {

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

// What the checker runs against.
struct CheckTarget {
  std::shared_ptr<Environment> env;
  // The builtin pack alone, in this process: the reference of the resize check's doubled inputs (null:
  // that part of the check has no reference).
  std::shared_ptr<Environment> reference;
  std::string plugin;    // the name the plugin declares
  bool delegate = false;
  double tolerance = 1e-5;  // float outputs: |got - want| <= tolerance * max |want|
  // Warnings the runtime logged since the last case (the environment's log sink appends to it).
  std::shared_ptr<std::vector<std::string>> log;
};

// The subject of a case for a plugin: the op, version and type its first node of interest has, and
// whether the plugin declares what the case needs (an op pack: every node but the runtime's own; a
// delegate: any of them). Null when the model cannot be loaded.
struct CaseSubject {
  bool applies = false;
  std::string op;
  int32_t version = 1;
  std::string type;
};
CaseSubject case_subject(const Model& model, const LoadedPlugin& plugin);

// Runs the case in folder `dir` (model.tflite, in_N.npy, out_N.npy), then, when it passed, the two-thread
// and the resize checks.
CaseResult run_case(const CheckTarget& target, const std::string& dir, const std::string& name,
                    const std::shared_ptr<const Model>& model, const CaseSubject& subject);

}  // namespace baton::tool
