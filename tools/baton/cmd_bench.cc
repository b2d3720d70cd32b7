// `baton bench`: load time, first-run time, then latency over repeated runs, memory, and with
// --profile where the time goes, per step (node or delegate partition) and per op type.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>

#include "commands.h"
#include "interrupt.h"
#include "input_gen.h"
#include "json_writer.h"

namespace baton::tool {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

uint64_t peak_rss_bytes() {
  struct rusage u {};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<uint64_t>(u.ru_maxrss) * 1024;
}

double percentile(std::vector<double> sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * (sorted.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

}  // namespace

int cmd_bench(const GlobalOptions& g, const boost::program_options::variables_map& vm) {
  if (!vm.count("model")) {
    std::fprintf(stderr, "baton bench: no model given\nusage: baton bench MODEL [--runs N] [--warmup N] "
                         "[--threads N] [--int-range LO:HI] [--profile] [--json]\n");
    return kExitUsage;
  }
  const int runs = vm["runs"].as<int>(), warmup = vm["warmup"].as<int>();
  if (runs < 1 || warmup < 0) {
    std::fprintf(stderr, "baton bench: --runs must be at least 1 and --warmup at least 0\n");
    return kExitUsage;
  }
  std::optional<IntRange> range;
  if (!int_range_option(vm, "baton bench", &range)) return kExitUsage;
  const bool profile = vm.count("profile") > 0, json = vm.count("json") > 0;
  const std::string path = vm["model"].as<std::string>();
  int code = kExitOk;
  auto env = open_environment(g, &code);
  if (!env) return code;

  const auto load_start = Clock::now();
  auto interp_ptr = open_interpreter(g, *env, path, &code);
  if (!interp_ptr) return code;
  const double load_ms = ms_since(load_start);
  api::Interpreter& interp = *interp_ptr;

  // The inputs are written once: a run leaves them intact (the arena never places a tensor over a model
  // input), and the timed part is invoke alone, as in TFLite's benchmark tools, so the figures compare like
  // with like. A run returns the milliseconds invoke took, or -1 on failure.
  for (int i = 0; i < interp.inputs(); ++i) {
    const baton_tensor* t = interp.input(i);
    const baton_tensor_type type = baton_tensor_get_type(t);
    size_t count = 1;
    for (int32_t d : api::shape_of(t)) count *= static_cast<size_t>(d);
    std::vector<uint8_t> bytes;
    if (!generate_input(type, count, 0, static_cast<uint32_t>(i), bytes, range)) {
      std::fprintf(stderr, "baton bench: cannot generate %s input %d\n", baton_tensor_type_name(type), i);
      return kExitError;
    }
    try {
      interp.set_input_bytes(i, bytes.data(), bytes.size());
    } catch (const api::Error& e) {
      std::fprintf(stderr, "baton: error: %s\n", e.what());
      return kExitError;
    }
  }
  // Ctrl-C cancels the running invoke and ends the benchmark (exit 130); -2 says so.
  CancelOnInterrupt on_interrupt(interp);
  auto run = [&]() -> double {
    const auto t = Clock::now();
    const std::string error = interp.try_invoke();
    if (CancelOnInterrupt::interrupted()) {
      std::fprintf(stderr, "baton bench: interrupted\n");
      return -2;
    }
    if (!error.empty()) {
      std::fprintf(stderr, "baton: error: %s\n", error.c_str());
      return -1;
    }
    return ms_since(t);
  };
  auto failed = [](double ms) { return ms == -2 ? kExitInterrupted : kExitError; };
  const double first_ms = run();
  if (first_ms < 0) return failed(first_ms);
  for (int i = 0; i < warmup; ++i) {
    if (const double ms = run(); ms < 0) return failed(ms);
  }
  interp.set_profiling(profile);
  std::vector<double> latencies;
  for (int i = 0; i < runs; ++i) {
    const double ms = run();
    if (ms < 0) return failed(ms);
    latencies.push_back(ms);
  }
  std::vector<double> sorted = latencies;
  std::sort(sorted.begin(), sorted.end());
  double mean = 0;
  for (double v : latencies) mean += v;
  mean /= latencies.size();
  const double median = percentile(sorted, 0.5), p90 = percentile(sorted, 0.9);
  const int threads = env->threads();
  const baton_interpreter_memory memory = interp.memory();
  const std::string plan = interp.plan(BATON_PLAN_SUMMARY);

  // Profile: per step, then per op type (a delegate partition counts as one row under its plugin).
  struct Row {
    std::string what, plugin;
    double ms = 0;
    size_t calls = 0;
  };
  std::vector<Row> steps;
  std::map<std::string, Row> by_op;
  double profiled = 0;
  if (profile) {
    for (const api::Interpreter::Step& step : interp.profile()) {
      const double ms = step.seconds * 1000.0 / runs;
      steps.push_back({(step.node >= 0 ? std::to_string(step.node) + " " : "") + step.op, step.plugin, ms, 1});
      const std::string key = step.op.rfind("partition ", 0) == 0 ? step.plugin + " partitions" : step.op;
      Row& r = by_op[key];
      r.what = key;
      r.plugin = step.plugin;
      r.ms += ms;
      r.calls += 1;
      profiled += ms;
    }
  }

  if (json) {
    JsonWriter j;
    j.begin_object().field("model", path).field("threads", threads).field("runs", runs).field("warmup", warmup);
    j.field("load_ms", load_ms).field("first_run_ms", first_ms);
    j.key("latency_ms").begin_object().field("min", sorted.front()).field("median", median).field("mean", mean);
    j.field("p90", p90).field("max", sorted.back()).end_object();
    j.field("arena_bytes", static_cast<uint64_t>(memory.arena_bytes));
    j.field("peak_rss_bytes", peak_rss_bytes());
    j.field("plan", plan);
    j.field("folded_nodes", static_cast<uint64_t>(memory.folded_nodes));
    j.field("dropped_nodes", static_cast<uint64_t>(memory.dropped_nodes));
    if (profile) {
      j.key("profile").begin_object().key("steps").begin_array();
      for (const Row& r : steps) {
        j.begin_object().field("step", r.what).field("plugin", r.plugin).field("ms", r.ms).end_object();
      }
      j.end_array().key("ops").begin_array();
      for (const auto& [k, r] : by_op) {
        j.begin_object().field("op", k).field("plugin", r.plugin).field("ms", r.ms);
        j.field("share", profiled > 0 ? r.ms / profiled : 0.0).field("calls", static_cast<uint64_t>(r.calls));
        j.end_object();
      }
      j.end_array().end_object();
    }
    j.end_object();
    std::printf("%s\n", j.str().c_str());
    return kExitOk;
  }
  std::printf("model: %s\nplan: %s\nthreads: %d, runs: %d (after %d warm-up)\n", path.c_str(),
              plan.c_str(), threads, runs, warmup);
  std::printf("load %.2f ms, first run %.2f ms\n", load_ms, first_ms);
  std::printf("latency ms: min %.3f  median %.3f  mean %.3f  p90 %.3f  max %.3f\n", sorted.front(), median, mean, p90,
              sorted.back());
  std::printf("memory: arena %zu bytes, peak RSS %llu bytes\n", memory.arena_bytes,
              static_cast<unsigned long long>(peak_rss_bytes()));
  if (profile) {
    std::printf("\nper op type (mean per run):\n  %-32s %-12s %10s %7s %6s\n", "op", "plugin", "ms", "share", "calls");
    std::vector<Row> ops;
    for (const auto& [k, r] : by_op) ops.push_back(r);
    std::sort(ops.begin(), ops.end(), [](const Row& a, const Row& b) { return a.ms > b.ms; });
    for (const Row& r : ops) {
      std::printf("  %-32s %-12s %10.3f %6.1f%% %6zu\n", r.what.c_str(), r.plugin.c_str(), r.ms,
                  profiled > 0 ? 100.0 * r.ms / profiled : 0.0, r.calls);
    }
    std::printf("\nper step (mean per run, slowest first):\n  %-40s %-12s %10s %7s\n", "step", "plugin", "ms", "share");
    std::vector<Row> by_time = steps;
    std::sort(by_time.begin(), by_time.end(), [](const Row& a, const Row& b) { return a.ms > b.ms; });
    for (const Row& r : by_time) {
      std::printf("  %-40s %-12s %10.3f %6.1f%%\n", r.what.c_str(), r.plugin.c_str(), r.ms,
                  profiled > 0 ? 100.0 * r.ms / profiled : 0.0);
    }
  }
  return kExitOk;
}

}  // namespace baton::tool
