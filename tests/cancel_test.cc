// Cancelling an invoke from another thread: the running invoke stops at a step boundary with "invoke
// cancelled", a later invoke runs whole and right; and from the command line, Ctrl-C (SIGINT) stops
// `baton bench` with exit status 130.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <fcntl.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "interpreter.h"
#include "op_graph.h"
#include "test_support.h"

extern char** environ;

namespace baton::test {
namespace {

// x -> TimesTwo -> TimesTwo ... (n nodes) on `size` floats: long enough to be caught running.
std::vector<uint8_t> doubling_chain(int n, int size) {
  OpGraph g;
  int32_t t = g.input({1, size});
  for (int i = 0; i < n; ++i) {
    const int32_t next = i + 1 == n ? g.output({1, size}) : g.add({1, size});
    g.op(32 /* CUSTOM */, {t}, {next});
    g.ops.back().custom = "TimesTwo";
    t = next;
  }
  return g.build();
}

TEST(Cancel, FromAnotherThreadStopsTheRunningInvoke) {
  TempDir plugins;
  plugins.add_plugin("testpack");
  auto env = isolated_environment({plugins.path()});
  ASSERT_TRUE(env) << env.error();
  auto model = load_model_buffer(doubling_chain(3000, 16384), "chain.tflite");
  ASSERT_TRUE(model) << model.error();
  auto made = Interpreter::create(env.value(), model.value());
  ASSERT_TRUE(made) << made.error();
  Interpreter& interp = *made.value();
  auto fill = [&] {
    float* x = reinterpret_cast<float*>(interp.input(0).data);
    for (int i = 0; i < 16384; ++i) x[i] = (i % 2 ? 1.0f : -1.0f) * 1e-30f;
  };
  fill();
  // Uncancelled, it runs whole.
  ASSERT_TRUE(interp.invoke());

  // Cancel again and again until the invoke returns: one lands while it runs (each invoke clears
  // earlier requests when it starts). On a loaded machine the canceller may not be scheduled before a
  // whole invoke is over: then try again, up to 50 times.
  // The status says it: an invoke clears the requests made before it started, so "invoke cancelled" means
  // a request landed while it ran (how long it ran is the scheduler's business, not checked here).
  Status s = Status::ok();
  for (int attempt = 0; attempt < 50 && s; ++attempt) {
    fill();
    std::atomic<bool> done{false};
    std::thread canceller([&] {
      while (!done.load()) {
        interp.cancel();
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    });
    s = interp.invoke();
    done.store(true);
    canceller.join();
  }
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "invoke cancelled");

  // The next invoke runs whole: x * 2^3000 overflows to +-inf, by hand.
  fill();
  ASSERT_TRUE(interp.invoke());
  const float* y = reinterpret_cast<const float*>(interp.output(0).data);
  EXPECT_EQ(y[0], -INFINITY);
  EXPECT_EQ(y[1], INFINITY);
}

// Whether process `pid` has a handler for SIGINT: bit SIGINT-1 of SigCgt in /proc/PID/status.
bool catches_sigint(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("SigCgt:", 0) == 0) return (std::stoull(line.substr(7), nullptr, 16) >> (SIGINT - 1)) & 1;
  }
  return false;
}

TEST(Cancel, SigintStopsBatonBenchWithStatus130) {
  TempDir work;
  const std::vector<uint8_t> bytes = doubling_chain(2000, 16384);
  {
    std::ofstream f(work.file("chain.tflite"), std::ios::binary);
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  work.write("empty.conf", "# nothing\n");
  const std::string out = work.file("out.txt");
  std::vector<std::string> args = {BATON_EXE, "bench", work.file("chain.tflite"), "--runs", "100000", "--config",
                                   work.file("empty.conf"), "--plugin-dir", std::string(TEST_PLUGIN_BUILD_DIR)};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, BATON_EXE, &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  // Signal only once the tool catches SIGINT (its SigCgt mask in /proc says so), then a little later so
  // an invoke is running: a slow start (sanitizer builds) must not meet the default action.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!catches_sigint(pid) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(catches_sigint(pid)) << "baton bench never installed its SIGINT handler";
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  kill(pid, SIGINT);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 130);
  std::ifstream f(out);
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("baton bench: interrupted"), std::string::npos) << text;
}

}  // namespace
}  // namespace baton::test
