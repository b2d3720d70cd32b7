// The crash journal end to end, through the `baton` command line: a plugin that kills the process during
// a model's prepare is quarantined for that model at the next start (per model; off with crash-journal =
// false). Deaths of isolated plugins' children are journaled too (isolation_test.cc).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "test_support.h"
#include "tiny_model.h"

namespace baton::test {
namespace {

struct Result {
  int code = -1;
  std::string out;  // stdout and stderr together
};

// A delegate that takes the process down during prepare is quarantined for that model at the next start,
// and the model runs without it; removing the quarantine file (or crash-journal = false) lets it back.
TEST(CrashJournal, QuarantinesAPluginThatKilledTheProcess) {
  TempDir plugins_, work_;
  plugins_.add_plugin("testpack");
  const std::vector<uint8_t> tiny = add_then_double().build();
  std::ofstream(work_.file("tiny.tflite"), std::ios::binary)
      .write(reinterpret_cast<const char*>(tiny.data()), static_cast<std::streamsize>(tiny.size()));
  plugins_.add_plugin("deleg_a");
  work_.write("crash.conf", "delegates = deleg-a\n[plugin.deleg-a]\nfail = crash\n");
  const std::string run = "XDG_STATE_HOME=" + work_.file("state") + " " + std::string(BATON_EXE) + " run " +
                          work_.file("tiny.tflite") + " --plugin-dir " + plugins_.path() + " --config " +
                          work_.file("crash.conf") + " 2>&1";
  auto sh = [](const std::string& cmd) {
    Result r;
    FILE* p = popen(cmd.c_str(), "r");
    std::array<char, 4096> buf;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
    int status = pclose(p);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return r;
  };
  Result first = sh(run);
  EXPECT_GT(first.code, 2) << "the crashing delegate should have killed the process: " << first.out;
  Result second = sh(run);
  ASSERT_EQ(second.code, 0) << second.out;
  EXPECT_NE(second.out.find("plugin deleg-a is quarantined for " + work_.file("tiny.tflite") +
                            ": a process died during its prepare of this model; remove "),
            std::string::npos)
      << second.out;
  EXPECT_NE(second.out.find("plan: testpack: 2 nodes"), std::string::npos) << second.out;
  // The quarantine is per model: another model still gets the delegate (and it crashes again).
  TinyModel other = add_then_double();
  other.description = "another model";
  const std::vector<uint8_t> bytes = other.build();
  std::ofstream(work_.file("other.tflite"), std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  std::string run_other = run;
  run_other.replace(run_other.find(work_.file("tiny.tflite")), work_.file("tiny.tflite").size(), work_.file("other.tflite"));
  EXPECT_GT(sh(run_other).code, 2);
  // With the journal off, nothing is quarantined.
  work_.write("crash.conf", "crash-journal = false\ndelegates = deleg-a\n[plugin.deleg-a]\nfail = crash\n");
  EXPECT_GT(sh(run).code, 2);
}

}  // namespace
}  // namespace baton::test
