// The conformance checker's engine: one case, run through the runtime's public API as an application
// would run it.
#include "plugin_check.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <latch>
#include <thread>

#include "npy.h"

namespace baton::tool {

namespace {

using api::shape_text;

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// The rule a failure message breaks, from the words the runtime writes: a child that died or hung
// (isolated_plugin.cc), an exception across the C boundary (plugin_call.h), a refusal or failure
// without a message ("no reason given"). "" when it is none of these.
std::string broken_rule(const std::string& message) {
  for (const char* died : {"its process was killed by", "its process exited with status", "did not answer within",
                           "its process went away"}) {
    if (message.find(died) != std::string::npos) return "crash";
  }
  if (message.find("exception across the C boundary") != std::string::npos) return "exception";
  if (message.find("no reason given") != std::string::npos) return "silent-refusal";
  return "";
}

// Numbers of an integer element type, widened, or false for a type that is not one.
bool integer_at(baton_tensor_type type, const uint8_t* p, size_t k, int64_t* out) {
  switch (type) {
    case BATON_TYPE_INT8: *out = reinterpret_cast<const int8_t*>(p)[k]; return true;
    case BATON_TYPE_UINT8: *out = p[k]; return true;
    case BATON_TYPE_INT16: *out = reinterpret_cast<const int16_t*>(p)[k]; return true;
    case BATON_TYPE_UINT16: *out = reinterpret_cast<const uint16_t*>(p)[k]; return true;
    case BATON_TYPE_INT32: *out = reinterpret_cast<const int32_t*>(p)[k]; return true;
    case BATON_TYPE_UINT32: *out = reinterpret_cast<const uint32_t*>(p)[k]; return true;
    case BATON_TYPE_INT64: *out = reinterpret_cast<const int64_t*>(p)[k]; return true;
    case BATON_TYPE_BOOL: *out = p[k] != 0; return true;
    default: return false;
  }
}

size_t integer_width(baton_tensor_type type) {
  switch (type) {
    case BATON_TYPE_INT8: case BATON_TYPE_UINT8: case BATON_TYPE_BOOL: return 1;
    case BATON_TYPE_INT16: case BATON_TYPE_UINT16: return 2;
    case BATON_TYPE_INT32: case BATON_TYPE_UINT32: return 4;
    case BATON_TYPE_INT64: return 8;
    default: return 0;
  }
}

struct Comparison {
  bool ok = true;
  double max_diff = 0;
  std::string detail;
};

// Floats (float32, float64, complex64 as float pairs) within `tolerance` of the largest reference
// magnitude, NaN where the reference has NaN; every other type exactly. `bytes` of `got` at `data`.
Comparison compare(baton_tensor_type type, const std::vector<int32_t>& shape, const uint8_t* data, size_t bytes,
                   const NpyArray& want, double tolerance) {
  Comparison c;
  if (want.type != type) {
    c.ok = false;
    c.detail = std::string("type ") + baton_tensor_type_name(type) + ", reference " + baton_tensor_type_name(want.type);
    return c;
  }
  if (want.shape != shape || want.data.size() != bytes) {
    c.ok = false;
    c.detail = "shape " + shape_text(shape) + ", reference " + shape_text(want.shape);
    return c;
  }
  auto floats = [&](auto tag) {
    using T = decltype(tag);
    const size_t n = bytes / sizeof(T);
    std::vector<T> g(n), w(n);
    if (n) {  // an empty output has no buffer to copy from
      std::memcpy(g.data(), data, n * sizeof(T));
      std::memcpy(w.data(), want.data.data(), n * sizeof(T));
    }
    double max_ref = 0;
    size_t nan_mismatch = 0, worst = 0;
    for (size_t k = 0; k < n; ++k) {
      if (std::isnan(w[k]) || std::isnan(g[k])) {
        nan_mismatch += std::isnan(w[k]) != std::isnan(g[k]);
        continue;
      }
      max_ref = std::max(max_ref, std::abs(static_cast<double>(w[k])));
      const double d = std::abs(static_cast<double>(g[k]) - static_cast<double>(w[k]));
      if (d > c.max_diff) c.max_diff = d, worst = k;
    }
    if (nan_mismatch) {
      c.ok = false;
      c.detail = std::to_string(nan_mismatch) + " NaN(s) where the reference has a number or the other way";
    } else if (c.max_diff > tolerance * max_ref) {
      c.ok = false;
      c.detail = "largest |diff| " + number(c.max_diff) + " at element " + std::to_string(worst) + " (got " +
                 number(g[worst]) + ", want " + number(w[worst]) + "; allowed " + number(tolerance * max_ref) + ")";
    }
  };
  if (type == BATON_TYPE_FLOAT32 || type == BATON_TYPE_COMPLEX64) {
    floats(float{});
  } else if (type == BATON_TYPE_FLOAT64 || type == BATON_TYPE_COMPLEX128) {
    floats(double{});
  } else if (const size_t width = integer_width(type); width) {
    const size_t n = bytes / width;
    size_t differ = 0, first = 0;
    for (size_t k = 0; k < n; ++k) {
      int64_t g = 0, w = 0;
      integer_at(type, data, k, &g);
      integer_at(type, want.data.data(), k, &w);
      if (g == w) continue;
      if (differ++ == 0) first = k;
      c.max_diff = std::max(c.max_diff, std::abs(static_cast<double>(g) - static_cast<double>(w)));
    }
    if (differ) {
      c.ok = false;
      c.detail = std::to_string(differ) + " of " + std::to_string(n) + " elements differ (first at " +
                 std::to_string(first) + "), by up to " + number(c.max_diff);
    }
  } else if (bytes && std::memcmp(data, want.data.data(), bytes) != 0) {
    c.ok = false;
    c.detail = "the bytes differ";
  }
  return c;
}

// What the runtime decided for an interpreter, from its plan report (`baton plan --format json`).
Json plan_of(api::Interpreter& in) { return Json::parse(in.plan(BATON_PLAN_JSON)); }

// Feeds every input from its .npy array; an input whose array has another shape is resized to it first
// (as TFLite was, for the reference). "" when it went in, else why not.
std::string set_inputs(api::Interpreter& in, const std::vector<NpyArray>& inputs) {
  if (inputs.size() != static_cast<size_t>(in.inputs())) {
    return "the case has " + std::to_string(inputs.size()) + " input file(s) for the model's " + std::to_string(in.inputs()) + " input(s)";
  }
  try {
    bool resized = false;
    for (int i = 0; i < in.inputs(); ++i) {
      if (inputs[i].shape == api::shape_of(in.input(i))) continue;
      in.resize_input(i, inputs[i].shape);
      resized = true;
    }
    if (resized) in.allocate_tensors();
    for (int i = 0; i < in.inputs(); ++i) {
      const NpyArray& a = inputs[i];
      const baton_tensor* t = in.input(i);
      if (baton_tensor_get_type(t) != BATON_TYPE_STRING &&
          (a.type != baton_tensor_get_type(t) || a.data.size() != baton_tensor_get_byte_size(t))) {
        return "in_" + std::to_string(i) + ".npy does not fit input " + std::to_string(i);
      }
      if (!a.data.empty() || baton_tensor_get_type(t) == BATON_TYPE_STRING) in.set_input_bytes(i, a.data.data(), a.data.size());
    }
  } catch (const api::Error& e) {
    return e.what();
  }
  return "";
}

using Bytes = std::vector<std::vector<uint8_t>>;

Bytes output_bytes(const api::Interpreter& in) {
  Bytes out;
  for (int o = 0; o < in.outputs(); ++o) {
    const auto* data = static_cast<const uint8_t*>(baton_tensor_get_data(in.output(o)));
    out.emplace_back(data, data + (data ? baton_tensor_get_byte_size(in.output(o)) : 0));
  }
  return out;
}

// Output o against an array: its type, shape and bytes as the interpreter holds them.
Comparison compare_output(const api::Interpreter& in, int o, const NpyArray& want, double tolerance) {
  const baton_tensor* t = in.output(o);
  return compare(baton_tensor_get_type(t), api::shape_of(t), static_cast<const uint8_t*>(baton_tensor_get_data(t)),
                 baton_tensor_get_byte_size(t), want, tolerance);
}

class CaseRun {
 public:
  CaseRun(const CheckTarget& target, CaseResult& result) : t_(target), r_(result) {}

  // A finding of rule `kind` (or the rule `message` shows it breaks, when kind is empty).
  void find(std::string kind, const std::string& message) {
    if (kind.empty()) kind = broken_rule(message);
    if (kind.empty()) kind = "invoke-error";
    r_.findings.push_back({kind, r_.op, r_.type, r_.name, message});
  }
  void fail(const std::string& kind, const std::string& message) {
    r_.outcome = CaseOutcome::Fail;
    if (r_.detail.empty()) r_.detail = message;
    find(kind, message);
  }
  // A prepare that failed: a refusal, unless its message shows a broken rule (then also a failure).
  void refused(const std::string& message) {
    // "MODEL: 1 node(s) cannot run:\n  node 0 (ADD v1): prepare failed; PACK: REASON": the reason.
    std::string reason = message.substr(message.find_last_of('\n') == std::string::npos ? 0 : message.find_last_of('\n') + 1);
    if (const size_t at = reason.find("prepare failed; "); at != std::string::npos) reason = reason.substr(at + 16);
    if (reason.rfind(t_.plugin + ": ", 0) == 0) reason = reason.substr(t_.plugin.size() + 2);
    r_.outcome = CaseOutcome::Refused;
    r_.detail = reason;
    if (const std::string rule = broken_rule(reason + "\n" + t_.log->text()); !rule.empty()) {
      r_.outcome = CaseOutcome::Fail;
      find(rule, reason);
    }
  }
  // This plugin's fallbacks (stage, reason) in the plan of `in` since `seen` of them were looked at.
  std::vector<std::pair<std::string, std::string>> new_fallbacks(api::Interpreter& in, size_t* seen) {
    const Json plan = plan_of(in);
    const Json& all = plan.at("fallbacks");
    std::vector<std::pair<std::string, std::string>> ours;
    for (size_t i = *seen; i < all.size(); ++i) {
      if (text_of(all[i], "plugin") == t_.plugin) ours.emplace_back(text_of(all[i], "stage"), text_of(all[i], "reason"));
    }
    *seen = all.size();
    return ours;
  }

  const CheckTarget& t_;
  CaseResult& r_;
};

// Whether the delegate runs the case's nodes of interest: none taken is a refusal (with the reason
// check_node or select_nodes gave); a refusal without one is a finding.
bool delegate_took(CaseRun& run, api::Interpreter& in) {
  bool took = false;
  std::string reason;
  const Json plan = plan_of(in);
  for (const Json& node : plan.at("nodes")) {
    const Json& placement = node.at("placement");
    if (text_of(placement, "kind") == "delegate" && text_of(placement, "plugin") == run.t_.plugin) took = true;
    for (const Json& r : node.at("refusals")) {
      if (text_of(r, "plugin") != run.t_.plugin) continue;
      const std::string why = text_of(r, "reason");
      if (reason.empty()) reason = why;
      if (why.empty() || why.find("no reason given") != std::string::npos) {
        run.find("silent-refusal", "node " + std::to_string(node.value("index", 0)) + " refused without a reason");
      }
    }
  }
  if (!took) {
    run.r_.outcome = CaseOutcome::Refused;
    run.r_.detail = reason.empty() ? "not taken (no refusal recorded)" : reason;
    if (!run.r_.findings.empty()) run.r_.outcome = CaseOutcome::Fail;
  }
  return took;
}

// Two more interpreters of the model invoked from two threads at the same time must give the bytes the
// first run gave.
void check_threads(CaseRun& run, const api::Model& model, const std::vector<NpyArray>& inputs, const Bytes& reference) {
  std::unique_ptr<api::Interpreter> in[2];
  for (auto& i : in) {
    try {
      i = std::make_unique<api::Interpreter>(*run.t_.env, model);
    } catch (const api::Error& e) {
      return run.fail("threads", std::string("a second interpreter of the model failed: ") + e.what());
    }
    if (const std::string e = set_inputs(*i, inputs); !e.empty()) return run.fail("threads", "inputs of a second interpreter: " + e);
  }
  std::string error[2];
  std::latch start(2);
  auto body = [&](int k) {
    start.arrive_and_wait();
    error[k] = in[k]->try_invoke();
  };
  std::thread a(body, 0), b(body, 1);
  a.join();
  b.join();
  for (int k = 0; k < 2; ++k) {
    if (!error[k].empty()) return run.fail("threads", "invoke in thread " + std::to_string(k + 1) + " failed: " + error[k]);
    if (output_bytes(*in[k]) != reference) {
      return run.fail("threads", "thread " + std::to_string(k + 1) + " of two invoking at once gave other bytes than one alone");
    }
  }
  run.r_.threads = "same";
}

// The resize check, on the interpreter that ran the case: every input's first dimension doubled (its
// data twice over), prepared again and invoked; then the case's own shapes again, whose outputs must be
// the reference's. The doubled run has no TFLite reference: the builtin pack, in this process, on the
// same inputs is its reference ("checked"; "ran" where the builtin pack cannot run the model). A doubled
// input may legitimately be refused (an axis or shape input that no longer makes sense): refused with a
// reason is "refused" (or "n/a" when the builtin pack refuses it too), never a finding; a crash, an
// exception or a refusal without a reason is. Models with state (variables, random ops: a second invoke
// gives other numbers by design) and string or scalar inputs are "n/a".
void check_resize(CaseRun& run, api::Interpreter& in, const api::Model& model, bool stateful,
                  const std::vector<NpyArray>& inputs, const std::vector<NpyArray>& want, size_t* seen_fallbacks) {
  // Input 0's first dimension doubles, and with it that of every input of the same first dimension (the
  // same batch); the others (axes, shapes, broadcast operands) stay as they are.
  bool applicable = !stateful && in.inputs() > 0 && inputs.size() == static_cast<size_t>(in.inputs());
  for (int i = 0; i < in.inputs() && applicable; ++i) applicable = baton_tensor_get_type(in.input(i)) != BATON_TYPE_STRING;
  if (applicable) applicable = !inputs[0].shape.empty() && inputs[0].shape[0] > 0;
  if (!applicable) {
    run.r_.resize = "n/a";
    return;
  }
  std::vector<NpyArray> doubled = inputs;
  const int32_t batch = inputs[0].shape[0];
  for (NpyArray& a : doubled) {
    if (a.shape.empty() || a.shape[0] != batch) continue;
    a.shape[0] *= 2;
    a.data.insert(a.data.end(), a.data.begin(), a.data.end());
  }
  const std::string what = "input 0 resized to " + shape_text(doubled[0].shape);
  Bytes reference;
  bool have_reference = false;
  if (run.t_.reference) {
    try {
      api::Interpreter ref(*run.t_.reference, model);
      if (set_inputs(ref, doubled).empty() && ref.try_invoke().empty()) {
        reference = output_bytes(ref);
        have_reference = true;
      }
    } catch (const api::Error&) {
      // the builtin pack cannot run the model: the doubled run has no reference
    }
  }
  std::string ran = set_inputs(in, doubled);
  if (ran.empty()) ran = in.try_invoke();
  for (const auto& [stage, reason] : run.new_fallbacks(in, seen_fallbacks)) {
    if (const std::string rule = broken_rule(reason); !rule.empty()) run.fail(rule, what + ": " + stage + ": " + reason);
  }
  if (!ran.empty()) {
    if (const std::string rule = broken_rule(ran + "\n" + run.t_.log->text()); !rule.empty()) {
      return run.fail(rule, what + ": " + ran);
    }
    run.r_.resize = have_reference ? "refused" : "n/a";
  } else if (have_reference) {
    for (int o = 0; o < in.outputs(); ++o) {
      const baton_tensor* t = in.output(o);
      // The reference's own shape is in the bytes' count; a plugin's other shape shows as a size mismatch.
      const NpyArray ref{baton_tensor_get_type(t), api::shape_of(t), reference[static_cast<size_t>(o)]};
      const Comparison c = compare_output(in, o, ref, run.t_.tolerance);
      if (!c.ok) {
        return run.fail("resize", what + ", output " + std::to_string(o) + " differs from the builtin pack's: " + c.detail);
      }
    }
    run.r_.resize = "checked";
  } else {
    run.r_.resize = "ran";
  }
  // Back to the case's own shapes: the outputs must be the reference's again.
  if (const std::string e = set_inputs(in, inputs); !e.empty()) return run.fail("resize", "after " + what + " and back: " + e);
  if (const std::string e = in.try_invoke(); !e.empty()) return run.fail("resize", "after " + what + " and back, invoke failed: " + e);
  for (int o = 0; o < in.outputs(); ++o) {
    const Comparison c = compare_output(in, o, want[static_cast<size_t>(o)], run.t_.tolerance);
    if (!c.ok) return run.fail("resize", "after " + what + " and back, output " + std::to_string(o) + ": " + c.detail);
  }
}

std::string type_text(int32_t type) {
  return type < 0 ? "NONE" : baton_tensor_type_name(static_cast<baton_tensor_type>(type));
}

}  // namespace

std::string DeclaredOp::text() const {
  const std::string name = composite ? "STABLEHLO_COMPOSITE '" + op + "'" : op;
  if (min_version == max_version) return name + " v" + std::to_string(min_version);
  return name + " v" + std::to_string(min_version) + "-" + std::to_string(max_version);
}

bool PluginFacts::declares(const api::Model::Node& node) const {
  const bool custom = node.op_code == BATON_OP_CUSTOM, composite = node.op_code == BATON_OP_STABLEHLO_COMPOSITE;
  for (const DeclaredOp& d : ops) {
    if (d.custom == custom && d.composite == composite && d.op == node.op && node.version >= d.min_version &&
        node.version <= d.max_version) {
      return true;
    }
  }
  return false;
}

CaseSubject case_subject(const std::vector<api::Model::Node>& nodes, const PluginFacts& plugin) {
  // The first node the plugin declares, else the first node: the runtime's own nodes (control flow,
  // variables) are no plugin's.
  const api::Model::Node* subject = nullptr;
  bool subject_declared = false, all_declared = true, any_declared = false;
  for (const api::Model::Node& n : nodes) {
    if (n.runtime) continue;
    const bool declared = plugin.declares(n);
    all_declared = all_declared && declared;
    any_declared = any_declared || declared;
    if (!subject || (declared && !subject_declared)) subject = &n, subject_declared = declared;
  }
  CaseSubject s;
  if (!subject) return s;
  s.op = subject->op;
  s.version = subject->version;
  s.type = type_text(subject->type);
  s.applies = plugin.delegate() ? (plugin.selects_nodes || any_declared) : all_declared;
  return s;
}

CaseResult run_case(const CheckTarget& target, const std::string& dir, const std::string& name, const api::Model& model,
                    bool stateful, const CaseSubject& subject) {
  CaseResult r;
  r.name = name;
  r.op = subject.op;
  r.version = subject.version;
  r.type = subject.type;
  CaseRun run(target, r);
  target.log->clear();

  // in_0.npy, in_1.npy, ... and out_0.npy, ...: as many as there are.
  std::vector<NpyArray> inputs, want;
  for (const char* side : {"in", "out"}) {
    for (size_t i = 0;; ++i) {
      const std::string file = dir + "/" + side + "_" + std::to_string(i) + ".npy";
      if (!std::filesystem::exists(file)) break;
      auto a = read_npy(file);
      if (!a) {
        run.fail("case", "the case is unreadable: " + a.error());
        return r;
      }
      (side[0] == 'i' ? inputs : want).push_back(std::move(a.value()));
    }
  }

  std::unique_ptr<api::Interpreter> made;
  try {
    made = std::make_unique<api::Interpreter>(*target.env, model);
  } catch (const api::Error& e) {
    // An op pack's kernel that refuses the node at prepare leaves it to no one: the reason is here.
    if (target.delegate) {
      run.fail("", e.what());
    } else {
      run.refused(e.what());
    }
    return r;
  }
  api::Interpreter& in = *made;
  if (want.size() != static_cast<size_t>(in.outputs())) {
    run.fail("case", "the case has " + std::to_string(want.size()) + " output file(s) for the model's " +
                         std::to_string(in.outputs()) + " output(s)");
    return r;
  }
  size_t seen = 0;
  for (const auto& [stage, reason] : run.new_fallbacks(in, &seen)) {
    // A delegate's partition lost at init or prepare: a refusal of the case, with its reason.
    run.refused(stage + " failed: " + reason);
  }
  if (r.outcome != CaseOutcome::Pass) return r;
  if (target.delegate && !delegate_took(run, in)) return r;
  if (const std::string e = set_inputs(in, inputs); !e.empty()) {
    run.refused(e);
    return r;
  }
  const std::string invoke_error = in.try_invoke();
  for (const auto& [stage, reason] : run.new_fallbacks(in, &seen)) {
    run.fail(stage == "invoke" ? "invoke-error" : "", stage + " failed: " + reason);
    if (const std::string rule = broken_rule(reason); !rule.empty()) r.findings.back().kind = rule;
  }
  if (!invoke_error.empty()) {
    run.fail("", "invoke failed: " + invoke_error);
    return r;
  }
  if (r.outcome != CaseOutcome::Pass) return r;
  for (int o = 0; o < in.outputs(); ++o) {
    const Comparison c = compare_output(in, o, want[static_cast<size_t>(o)], target.tolerance);
    r.max_diff = std::max(r.max_diff, c.max_diff);
    if (!c.ok) {
      r.outcome = CaseOutcome::Fail;
      const std::string message = "output " + std::to_string(o) + ": " + c.detail;
      if (r.detail.empty()) r.detail = message;
      run.find("mismatch", message);
    }
  }
  if (r.outcome != CaseOutcome::Pass) return r;
  check_threads(run, model, inputs, output_bytes(in));
  check_resize(run, in, model, stateful, inputs, want, &seen);
  return r;
}

}  // namespace baton::tool
