// The conformance checker's engine: one case, run through the runtime as an application would run it.
#include "plugin_check.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <latch>
#include <thread>

#include "interpreter.h"
#include "npy.h"

namespace baton::tool {

namespace {

std::string shape_text(const std::vector<int32_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

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

// Feeds every input from DIR/in_I.npy; an input whose file has another shape is resized to it first (as
// TFLite was, for the reference).
Status set_inputs(Interpreter& in, const std::vector<NpyArray>& inputs) {
  bool resized = false;
  for (size_t i = 0; i < in.input_count(); ++i) {
    if (inputs[i].shape == in.input(i).shape) continue;
    if (Status s = in.resize_input(i, inputs[i].shape); !s) return s;
    resized = true;
  }
  if (resized) {
    if (Status s = in.ensure_prepared(); !s) return s;
  }
  for (size_t i = 0; i < in.input_count(); ++i) {
    const NpyArray& a = inputs[i];
    if (in.input(i).type == BATON_TYPE_STRING) {
      if (Status s = in.set_string_input(i, a.data.data(), a.data.size()); !s) return s;
      continue;
    }
    if (a.type != in.input(i).type || a.data.size() != in.input(i).bytes) {
      return Status::error("in_" + std::to_string(i) + ".npy does not fit input " + std::to_string(i));
    }
    if (!a.data.empty()) std::memcpy(in.input(i).data, a.data.data(), a.data.size());
  }
  return Status::ok();
}

bool stateful(const Model& model) {
  for (const SubgraphInfo& g : model.subgraphs) {
    for (const TensorInfo& t : g.tensors) {
      if (t.is_variable) return true;
    }
    for (const NodeInfo& n : g.nodes) {
      if (is_random_op(n.op_code) || is_runtime_op(n.op_code)) return true;
    }
  }
  return false;
}

using Bytes = std::vector<std::vector<uint8_t>>;

Bytes output_bytes(const Interpreter& in) {
  Bytes out;
  for (size_t o = 0; o < in.output_count(); ++o) out.emplace_back(in.output(o).data, in.output(o).data + in.output(o).bytes);
  return out;
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
    if (const std::string rule = broken_rule(reason + "\n" + log_text()); !rule.empty()) {
      r_.outcome = CaseOutcome::Fail;
      find(rule, reason);
    }
  }
  std::string log_text() const {
    std::string s;
    for (const std::string& line : *t_.log) s += line + "\n";
    return s;
  }
  // This plugin's fallbacks that `in` recorded since `seen` of them were looked at.
  std::vector<Fallback> new_fallbacks(const Interpreter& in, size_t* seen) {
    std::vector<Fallback> all = in.fallbacks(), ours;
    for (size_t i = *seen; i < all.size(); ++i) {
      if (all[i].plugin == t_.plugin) ours.push_back(all[i]);
    }
    *seen = all.size();
    return ours;
  }

  const CheckTarget& t_;
  CaseResult& r_;
};

// Whether the delegate runs the case's nodes of interest: none taken is a refusal (with the reason
// check_node or select_nodes gave); a refusal without one is a finding.
bool delegate_took(CaseRun& run, const Interpreter& in) {
  bool took = false;
  std::string reason;
  for (size_t i = 0; i < in.nodes().size(); ++i) {
    const Placement p = in.placement(i);
    if (p.kind == "delegate" && p.plugin == run.t_.plugin) took = true;
    for (const Refusal& r : in.refusals(i)) {
      if (r.plugin != run.t_.plugin) continue;
      if (reason.empty()) reason = r.reason;
      if (r.reason.empty() || r.reason.find("no reason given") != std::string::npos) {
        run.find("silent-refusal", "node " + std::to_string(i) + " refused without a reason");
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
void check_threads(CaseRun& run, const std::shared_ptr<const Model>& model, const std::vector<NpyArray>& inputs,
                   const Bytes& reference) {
  std::unique_ptr<Interpreter> in[2];
  for (auto& i : in) {
    auto made = Interpreter::create(run.t_.env, model);
    if (!made) return run.fail("threads", "a second interpreter of the model failed: " + made.error());
    i = std::move(made.value());
    if (Status s = set_inputs(*i, inputs); !s) return run.fail("threads", "inputs of a second interpreter: " + s.message());
  }
  Status status[2];
  std::latch start(2);
  auto body = [&](int k) {
    start.arrive_and_wait();
    status[k] = in[k]->invoke();
  };
  std::thread a(body, 0), b(body, 1);
  a.join();
  b.join();
  for (int k = 0; k < 2; ++k) {
    if (!status[k]) return run.fail("threads", "invoke in thread " + std::to_string(k + 1) + " failed: " + status[k].message());
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
void check_resize(CaseRun& run, Interpreter& in, const std::shared_ptr<const Model>& model,
                  const std::vector<NpyArray>& inputs, const std::vector<NpyArray>& want, size_t* seen_fallbacks) {
  // Input 0's first dimension doubles, and with it that of every input of the same first dimension (the
  // same batch); the others (axes, shapes, broadcast operands) stay as they are.
  bool applicable = !stateful(*model) && in.input_count() > 0 && inputs.size() == in.input_count();
  for (size_t i = 0; i < in.input_count() && applicable; ++i) applicable = in.input(i).type != BATON_TYPE_STRING;
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
    auto ref = Interpreter::create(run.t_.reference, model);
    if (ref && set_inputs(*ref.value(), doubled) && ref.value()->invoke()) {
      reference = output_bytes(*ref.value());
      have_reference = true;
    }
  }
  Status ran = set_inputs(in, doubled);
  if (ran) ran = in.invoke();
  for (const Fallback& f : run.new_fallbacks(in, seen_fallbacks)) {
    if (const std::string rule = broken_rule(f.reason); !rule.empty()) run.fail(rule, what + ": " + f.stage + ": " + f.reason);
  }
  if (!ran) {
    if (const std::string rule = broken_rule(ran.message() + "\n" + run.log_text()); !rule.empty()) {
      return run.fail(rule, what + ": " + ran.message());
    }
    run.r_.resize = have_reference ? "refused" : "n/a";
  } else if (have_reference) {
    for (size_t o = 0; o < in.output_count(); ++o) {
      const Tensor& t = in.output(o);
      NpyArray ref{t.type, t.shape, reference[o]};
      // The reference's own shape is in the bytes' count; a plugin's other shape shows as a size mismatch.
      Comparison c = compare(t.type, t.shape, t.data, t.bytes, ref, run.t_.tolerance);
      if (!c.ok) {
        return run.fail("resize", what + ", output " + std::to_string(o) + " differs from the builtin pack's: " + c.detail);
      }
    }
    run.r_.resize = "checked";
  } else {
    run.r_.resize = "ran";
  }
  // Back to the case's own shapes: the outputs must be the reference's again.
  if (Status s = set_inputs(in, inputs); !s) return run.fail("resize", "after " + what + " and back: " + s.message());
  if (Status s = in.invoke(); !s) return run.fail("resize", "after " + what + " and back, invoke failed: " + s.message());
  for (size_t o = 0; o < in.output_count(); ++o) {
    const Tensor& t = in.output(o);
    Comparison c = compare(t.type, t.shape, t.data, t.bytes, want[o], run.t_.tolerance);
    if (!c.ok) return run.fail("resize", "after " + what + " and back, output " + std::to_string(o) + ": " + c.detail);
  }
}

}  // namespace

CaseSubject case_subject(const Model& model, const LoadedPlugin& plugin) {
  // The first node the plugin declares, else the first node: the runtime's own nodes (control flow,
  // variables) are no plugin's.
  const NodeInfo* subject = nullptr;
  const SubgraphInfo* where = nullptr;
  bool subject_declared = false, all_declared = true, any_declared = false;
  for (const SubgraphInfo& g : model.subgraphs) {
    for (const NodeInfo& n : g.nodes) {
      if (is_runtime_op(n.op_code)) continue;
      const bool declared = plugin.find_op(n.op_code, claim_name(n), n.version) != nullptr;
      all_declared = all_declared && declared;
      any_declared = any_declared || declared;
      if (!subject || (declared && !subject_declared)) subject = &n, where = &g, subject_declared = declared;
    }
  }
  CaseSubject s;
  if (!subject) return s;
  const NodeInfo& n = *subject;
  s.op = n.op_code == BATON_OP_CUSTOM || n.op_code == BATON_OP_STABLEHLO_COMPOSITE ? claim_name(n) : op_name(n.op_code);
  s.version = n.version;
  int32_t t = -1;
  for (int32_t i : n.inputs) {
    if (i >= 0) {
      t = i;
      break;
    }
  }
  if (t < 0 && !n.outputs.empty()) t = n.outputs[0];
  s.type = t >= 0 && static_cast<size_t>(t) < where->tensors.size() ? baton_tensor_type_name(where->tensors[t].type) : "NONE";
  if (plugin.kind == BATON_PLUGIN_DELEGATE) {
    s.applies = plugin.delegate.select_nodes ? true : any_declared;
  } else {
    s.applies = all_declared;
  }
  return s;
}

CaseResult run_case(const CheckTarget& target, const std::string& dir, const std::string& name,
                    const std::shared_ptr<const Model>& model, const CaseSubject& subject) {
  CaseResult r;
  r.name = name;
  r.op = subject.op;
  r.version = subject.version;
  r.type = subject.type;
  CaseRun run(target, r);
  target.log->clear();

  std::vector<NpyArray> inputs, want;
  for (size_t i = 0; i < model->main().inputs.size(); ++i) {
    auto a = read_npy(dir + "/in_" + std::to_string(i) + ".npy");
    if (!a) {
      run.fail("case", "the case is unreadable: " + a.error());
      return r;
    }
    inputs.push_back(std::move(a.value()));
  }
  for (size_t o = 0; o < model->main().outputs.size(); ++o) {
    auto a = read_npy(dir + "/out_" + std::to_string(o) + ".npy");
    if (!a) {
      run.fail("case", "the case is unreadable: " + a.error());
      return r;
    }
    want.push_back(std::move(a.value()));
  }

  auto made = Interpreter::create(target.env, model);
  if (!made) {
    // An op pack's kernel that refuses the node at prepare leaves it to no one: the reason is here.
    if (target.delegate) {
      run.fail("", made.error());
    } else {
      run.refused(made.error());
    }
    return r;
  }
  Interpreter& in = *made.value();
  size_t seen = 0;
  for (const Fallback& f : run.new_fallbacks(in, &seen)) {
    // A delegate's partition lost at init or prepare: a refusal of the case, with its reason.
    run.refused(f.stage + " failed: " + f.reason);
  }
  if (r.outcome != CaseOutcome::Pass) return r;
  if (target.delegate && !delegate_took(run, in)) return r;
  if (Status s = set_inputs(in, inputs); !s) {
    run.refused(s.message());
    return r;
  }
  Status invoked = in.invoke();
  for (const Fallback& f : run.new_fallbacks(in, &seen)) {
    run.fail(f.stage == "invoke" ? "invoke-error" : "", f.stage + " failed: " + f.reason);
    if (const std::string rule = broken_rule(f.reason); !rule.empty()) r.findings.back().kind = rule;
  }
  if (!invoked) {
    run.fail("", "invoke failed: " + invoked.message());
    return r;
  }
  if (r.outcome != CaseOutcome::Pass) return r;
  for (size_t o = 0; o < in.output_count(); ++o) {
    const Tensor& t = in.output(o);
    Comparison c = compare(t.type, t.shape, t.data, t.bytes, want[o], target.tolerance);
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
  check_resize(run, in, model, inputs, want, &seen);
  return r;
}

}  // namespace baton::tool
