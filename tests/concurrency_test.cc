// Several interpreters, of the same model and of different models, running in threads at once and
// sharing one environment's plugins. Every run must give the single-threaded answer. The suite also
// runs in a ThreadSanitizer build (tools/test.sh), which must report nothing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <thread>

#include "interpreter.h"
#include "npy.h"
#include "test_support.h"
#include "tiny_model.h"

namespace baton::test {
namespace {

struct Job {
  std::shared_ptr<const Model> model;
  std::vector<std::vector<uint8_t>> inputs;
  std::vector<std::vector<uint8_t>> expected;  // from a single-threaded run
};

std::vector<std::vector<uint8_t>> run_once(Interpreter& in, const std::vector<std::vector<uint8_t>>& inputs) {
  for (size_t i = 0; i < in.input_count(); ++i) std::memcpy(in.input(i).data, inputs[i].data(), inputs[i].size());
  Status s = in.invoke();
  if (!s) ADD_FAILURE() << s.message();
  std::vector<std::vector<uint8_t>> out;
  for (size_t o = 0; o < in.output_count(); ++o) out.emplace_back(in.output(o).data, in.output(o).data + in.output(o).bytes);
  return out;
}

void run_in_threads(const std::shared_ptr<Environment>& env, const std::vector<Job>& jobs, int threads, int runs) {
  std::vector<std::thread> pool;
  std::vector<int> mismatches(threads, 0), failures(threads, 0);
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      const Job& job = jobs[t % jobs.size()];
      auto interp = Interpreter::create(env, job.model);  // each thread its own interpreter
      if (!interp) {
        failures[t]++;
        return;
      }
      for (int r = 0; r < runs; ++r) mismatches[t] += run_once(*interp.value(), job.inputs) != job.expected;
    });
  }
  for (auto& th : pool) th.join();
  for (int t = 0; t < threads; ++t) {
    EXPECT_EQ(failures[t], 0) << "thread " << t;
    EXPECT_EQ(mismatches[t], 0) << "thread " << t << " got results that differ from the single-threaded run";
  }
}

Job make_job(const std::shared_ptr<Environment>& env, std::shared_ptr<const Model> model, uint8_t fill) {
  Job job;
  job.model = std::move(model);
  auto interp = Interpreter::create(env, job.model);
  EXPECT_TRUE(interp) << interp.error();
  if (!interp) return job;
  for (size_t i = 0; i < interp.value()->input_count(); ++i) {
    std::vector<uint8_t> bytes(interp.value()->input(i).bytes);
    for (size_t k = 0; k < bytes.size(); k += 4) {
      const float v = static_cast<float>((k / 4 * 7 + fill) % 13) / 6.5f - 1.0f;
      std::memcpy(bytes.data() + k, &v, 4);
    }
    job.inputs.push_back(std::move(bytes));
  }
  job.expected = run_once(*interp.value(), job.inputs);
  return job;
}

TEST(Concurrency, TinyModelsThroughANonReentrantPackAndDelegate) {
  TempDir plugins, conf;
  plugins.add_plugin("testpack");
  plugins.add_plugin("deleg_a");
  conf.write("baton.conf", "delegates = deleg-a\n[plugin.deleg-a]\nops = ADD\n");
  auto env = isolated_environment({plugins.path()}, conf.file("baton.conf"));
  ASSERT_TRUE(env) << env.error();
  auto a = load_model_buffer(add_then_double().build(), "a.tflite");
  ASSERT_TRUE(a) << a.error();
  std::vector<Job> jobs = {make_job(env.value(), a.value(), 1), make_job(env.value(), a.value(), 5)};
  run_in_threads(env.value(), jobs, 6, 200);
}

// Threads making, running and dropping interpreters of two models, one of which alone needs triplepack:
// the pack is parked when a model is made while no interpreter holds it, and loaded again by the next
// that needs it, under the others' runs (plugin_parking_test.cc checks the parking itself).
TEST(Concurrency, OpPacksParkedAndLoadedAgainUnderOtherThreads) {
  TempDir plugins;
  plugins.add_plugin("testpack");
  plugins.add_plugin("triplepack");
  EnvironmentOptions o = isolated_options({plugins.path()});
  // The log is written from every thread: counted under a lock.
  auto log_mutex = std::make_shared<std::mutex>();
  auto loaded_again = std::make_shared<int>(0);
  o.log = [log_mutex, loaded_again](baton_log_level, const std::string& line) {
    std::lock_guard<std::mutex> hold(*log_mutex);
    *loaded_again += line.find("op pack triplepack loaded again") != std::string::npos;
  };
  auto env = Environment::create(o);
  ASSERT_TRUE(env) << env.error();
  auto doubled = load_model_buffer(add_then_double().build(), "double.tflite");
  auto tripled = load_model_buffer(times_three().build(), "triple.tflite");
  ASSERT_TRUE(doubled && tripled);
  const std::vector<Job> jobs = {make_job(env.value(), doubled.value(), 1), make_job(env.value(), tripled.value(), 2)};
  ASSERT_EQ(jobs[1].expected.size(), 1u);
  // A model made without triplepack parks it (the job's interpreter is gone): the threads' first
  // TimesThree loads it a second time at least.
  ASSERT_TRUE(Interpreter::create(env.value(), doubled.value()));
  std::vector<std::thread> pool;
  std::vector<int> bad(4, 0);
  for (int t = 0; t < 4; ++t) {
    pool.emplace_back([&, t] {
      for (int round = 0; round < 25; ++round) {
        const Job& job = jobs[(t + round) % 2];
        auto interp = Interpreter::create(env.value(), job.model);
        if (!interp) {
          ADD_FAILURE() << interp.error();
          ++bad[t];
          continue;
        }
        bad[t] += run_once(*interp.value(), job.inputs) != job.expected;
      }
    });
  }
  for (auto& th : pool) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(bad[t], 0) << "thread " << t;
  std::lock_guard<std::mutex> hold(*log_mutex);
  EXPECT_GE(*loaded_again, 2) << "triplepack was not loaded again under the threads";
}

TEST(Concurrency, RealModelsSharingTheBuiltinPack) {
  const char* cache = std::getenv("BATON_MODEL_CACHE");
  const std::string dir = cache ? cache : "";
  std::vector<std::string> names = {"face_detection_short_range.tflite", "model_1.tflite"};
  std::vector<std::shared_ptr<const Model>> models;
  for (const std::string& n : names) {
    if (!std::filesystem::exists(dir + "/" + n)) {
      if (std::getenv("BATON_REQUIRE_MODELS")) FAIL() << "missing " << dir << "/" << n;
      GTEST_SKIP() << "missing " << n;
    }
    auto m = load_model_file(dir + "/" + n);
    ASSERT_TRUE(m) << m.error();
    models.push_back(m.value());
  }
  auto env = isolated_environment({BUILTIN_PACK_DIR});
  ASSERT_TRUE(env) << env.error();
  std::vector<Job> jobs;
  for (size_t i = 0; i < models.size(); ++i) jobs.push_back(make_job(env.value(), models[i], static_cast<uint8_t>(i)));
  run_in_threads(env.value(), jobs, 4, 3);
}

// Loops and branches whose bodies share the builtin pack: each interpreter has its own subgraphs and
// arenas, so threads never meet except in the pack.
TEST(Concurrency, ControlFlowModelsInThreads) {
  auto env = isolated_environment({BUILTIN_PACK_DIR});
  ASSERT_TRUE(env) << env.error();
  std::vector<Job> jobs;
  for (const std::string name : {"while_count", "while_fibonacci", "if_then", "if_else"}) {
    const std::string dir = std::string(BATON_SOURCE_ROOT) + "/tests/data/control-flow/" + name + "/";
    auto m = load_model_file(dir + "model.tflite");
    ASSERT_TRUE(m) << m.error();
    Job job;
    job.model = m.value();
    for (size_t i = 0; std::filesystem::exists(dir + "in_" + std::to_string(i) + ".npy"); ++i) {
      auto arr = tool::read_npy(dir + "in_" + std::to_string(i) + ".npy");
      ASSERT_TRUE(arr) << arr.error();
      job.inputs.push_back(arr->data);
    }
    auto interp = Interpreter::create(env.value(), job.model);
    ASSERT_TRUE(interp) << interp.error();
    job.expected = run_once(*interp.value(), job.inputs);
    jobs.push_back(std::move(job));
  }
  run_in_threads(env.value(), jobs, 4, 20);
}

}  // namespace
}  // namespace baton::test
