// Delegates handed to baton's libtensorflowlite_c.so as TFLite applications hand them over: made by
// Google's external-delegate wrapper (TfLiteExternalDelegateCreate from the pinned npm
// tfjs-tflite-node@0.0.2's libexternal_delegate_obj.so, the library its Node addon links), wrapping our
// external delegate (tests/plugins/tflite_test_delegate.cc, which computes float ADD itself). The wrapper's
// Prepare runs the inner delegate's Prepare with the inner delegate, which then names the inner one to
// ReplaceNodeSubsetsWithDelegateKernels: TFLite 2.9 takes that, and so must baton. A delegate baton drops
// is reported to the application's error reporter; the crash journal keys a handed-over delegate by what it
// is (the library and function of its Prepare), not by its position among the handed-over ones; the first
// line of every reported error is a short summary.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "state_folder.h"
#include "tensorflow/lite/c/c_api.h"
#include "tensorflow/lite/delegates/external/external_delegate.h"
#include "tflite_c_test_support.h"

namespace {

namespace fs = std::filesystem;
using baton::test::add_relu_model;
using baton::test::Reported;

// Google's wrapper and our delegate, opened as an application's process would have them.
struct Libraries {
  void* wrapper = nullptr;
  void* ours = nullptr;
  decltype(&TfLiteExternalDelegateOptionsDefault) options_default = nullptr;
  decltype(&TfLiteExternalDelegateCreate) create = nullptr;
  decltype(&TfLiteExternalDelegateDelete) destroy = nullptr;
  TfLiteDelegate* (*create_ours)(char**, char**, size_t, void (*)(const char*)) = nullptr;
  void (*destroy_ours)(TfLiteDelegate*) = nullptr;
  int (*invokes)() = nullptr;

  // Empty (and the test skips) only where TFLite's files were never fetched and models are not required.
  std::string missing;

  Libraries() {
    if (!fs::exists(TFLITE_EXTERNAL_DELEGATE_LIB)) {
      missing = std::string(TFLITE_EXTERNAL_DELEGATE_LIB) + " (tools/fetch-tflite-c.sh fetches it)";
      return;
    }
    wrapper = dlopen(TFLITE_EXTERNAL_DELEGATE_LIB, RTLD_NOW | RTLD_LOCAL);
    ours = dlopen(TFLITE_TEST_DELEGATE, RTLD_NOW | RTLD_LOCAL);
    if (!wrapper || !ours) {
      missing = dlerror();
      return;
    }
    options_default = reinterpret_cast<decltype(options_default)>(dlsym(wrapper, "TfLiteExternalDelegateOptionsDefault"));
    create = reinterpret_cast<decltype(create)>(dlsym(wrapper, "TfLiteExternalDelegateCreate"));
    destroy = reinterpret_cast<decltype(destroy)>(dlsym(wrapper, "TfLiteExternalDelegateDelete"));
    create_ours = reinterpret_cast<decltype(create_ours)>(dlsym(ours, "tflite_plugin_create_delegate"));
    destroy_ours = reinterpret_cast<decltype(destroy_ours)>(dlsym(ours, "tflite_plugin_destroy_delegate"));
    invokes = reinterpret_cast<decltype(invokes)>(dlsym(ours, "baton_test_tflite_invokes"));
    if (!options_default || !create || !destroy || !create_ours || !destroy_ours || !invokes) missing = "a symbol";
  }

  // Google's wrapper around our delegate, with our delegate's `mode` option when one is given.
  TfLiteDelegate* wrapped(const char* mode = nullptr) const {
    TfLiteExternalDelegateOptions o = options_default(TFLITE_TEST_DELEGATE);
    if (mode) o.insert(&o, "mode", mode);
    return create(&o);
  }
};

const Libraries& libraries() {
  static const Libraries libs;
  return libs;
}

#define REQUIRE_LIBRARIES()                                                                         \
  do {                                                                                              \
    if (!libraries().missing.empty()) {                                                             \
      if (std::getenv("BATON_REQUIRE_MODELS")) FAIL() << "missing: " << libraries().missing;        \
      GTEST_SKIP() << "missing: " << libraries().missing;                                           \
    }                                                                                               \
  } while (0)

// One run of y = relu(x + c) with `delegates` handed over; the ADD's invokes in our delegate counted.
struct AddReluRun {
  bool created = false;
  bool invoked = false;
  int delegate_invokes = 0;
  std::vector<float> y;
  Reported reported;
};

AddReluRun run_add_relu(const std::vector<TfLiteDelegate*>& delegates) {
  AddReluRun run;
  TfLiteInterpreterOptions* options = TfLiteInterpreterOptionsCreate();
  for (TfLiteDelegate* d : delegates) TfLiteInterpreterOptionsAddDelegate(options, d);
  TfLiteInterpreterOptionsSetErrorReporter(options, &Reported::reporter, &run.reported);
  const std::vector<uint8_t> bytes = add_relu_model(4);
  TfLiteModel* model = TfLiteModelCreate(bytes.data(), bytes.size());
  TfLiteInterpreter* interp = model ? TfLiteInterpreterCreate(model, options) : nullptr;
  run.created = interp != nullptr;
  if (interp && TfLiteInterpreterAllocateTensors(interp) == kTfLiteOk) {
    const float x[4] = {1.0f, 3.0f, -2.0f, 0.25f};
    TfLiteTensorCopyFromBuffer(TfLiteInterpreterGetInputTensor(interp, 0), x, sizeof x);
    const int before = libraries().invokes();
    run.invoked = TfLiteInterpreterInvoke(interp) == kTfLiteOk;
    run.delegate_invokes = libraries().invokes() - before;
    run.y.resize(4);
    TfLiteTensorCopyToBuffer(TfLiteInterpreterGetOutputTensor(interp, 0), run.y.data(), 16);
  }
  TfLiteInterpreterDelete(interp);
  TfLiteModelDelete(model);
  TfLiteInterpreterOptionsDelete(options);
  return run;
}

// relu(x + (i - 2)), by hand.
const std::vector<float> kExpected = {0.0f, 2.0f, 0.0f, 1.25f};

TEST(TfLiteExternalDelegate, GooglesWrapperRunsTheInnerDelegate) {
  REQUIRE_LIBRARIES();
  TfLiteDelegate* d = libraries().wrapped();
  ASSERT_NE(d, nullptr);
  const AddReluRun run = run_add_relu({d});
  ASSERT_TRUE(run.created && run.invoked) << run.reported.all();
  EXPECT_EQ(run.delegate_invokes, 1) << run.reported.all();  // the ADD ran in our delegate's kernel
  EXPECT_EQ(run.y, kExpected);
  EXPECT_TRUE(run.reported.messages.empty()) << run.reported.all();
  libraries().destroy(d);
}

// Our delegate lists a node twice (mode "twice"): baton drops it, the model runs on the op packs, and the
// application's reporter hears which delegate and why, not only stderr.
TEST(TfLiteExternalDelegate, ADroppedDelegateReachesTheErrorReporter) {
  REQUIRE_LIBRARIES();
  TfLiteDelegate* d = libraries().wrapped("twice");
  ASSERT_NE(d, nullptr);
  const AddReluRun run = run_add_relu({d});
  ASSERT_TRUE(run.created && run.invoked) << run.reported.all();
  EXPECT_EQ(run.delegate_invokes, 0);
  EXPECT_EQ(run.y, kExpected);
  EXPECT_TRUE(run.reported.said("node selection failed")) << run.reported.all();
  EXPECT_TRUE(run.reported.said("is listed twice")) << run.reported.all();
  EXPECT_TRUE(run.reported.said("tflite-libexternal_delegate_obj-")) << run.reported.all();  // which delegate
  libraries().destroy(d);
}

// Every message the reporter gets starts with a line of under 200 characters (clients copy messages into
// fixed buffers: Google's Node addon keeps 1,000 bytes) that says which delegate failed and where; the
// whole message, with the delegate's 600-character reason, follows on the next line.
TEST(TfLiteExternalDelegate, FirstLinesOfReportedErrorsAreShort) {
  REQUIRE_LIBRARIES();
  TfLiteDelegate* d = libraries().wrapped("long-report");
  const AddReluRun run = run_add_relu({d});
  ASSERT_TRUE(run.created && run.invoked) << run.reported.all();
  EXPECT_EQ(run.y, kExpected);
  ASSERT_TRUE(run.reported.said(std::string(600, 'x'))) << run.reported.all();
  for (const std::string& m : run.reported.messages) {
    const std::string first = m.substr(0, m.find('\n'));
    EXPECT_LT(first.size(), 200u) << m;
    if (m.find(std::string(600, 'x')) != std::string::npos) {
      EXPECT_NE(first.find("tflite-libexternal_delegate_obj-"), std::string::npos) << first;
      EXPECT_NE(first.find("node selection failed"), std::string::npos) << first;
    }
  }
  libraries().destroy(d);
}

// Our delegate handed over directly dies in its Prepare (mode "segv-select") in a child process. The
// journal keys it by its library and Prepare: handed over again (with another mode, in another
// position), it is kept away from the model; Google's wrapper in the position it died in is not.
TEST(TfLiteExternalDelegateDeathTest, TheJournalKeysADelegateByWhatItIs) {
  REQUIRE_LIBRARIES();
  // One journal for the child and this process, fresh for this test.
  const std::string state = baton::test::test_state_dir() + "/journal-by-identity";
  fs::create_directories(state);
  const char* previous = std::getenv("XDG_STATE_HOME");
  const std::string saved = previous ? previous : "";
  setenv("XDG_STATE_HOME", state.c_str(), 1);
  const Libraries& libs = libraries();
  const char* mode_key = "mode";
  auto ours = [&](const char* mode) {
    char* keys[] = {const_cast<char*>(mode_key)};
    char* values[] = {const_cast<char*>(mode)};
    return libs.create_ours(keys, values, 1, [](const char*) {});
  };
  GTEST_FLAG_SET(death_test_style, "fast");  // the child must be this process's fork, with its environment
  // Killed by the signal, or (under AddressSanitizer, whose handler reports the SEGV) exited non-zero: the
  // statement's own end is exit(0).
  auto died = [](int status) { return !(WIFEXITED(status) && WEXITSTATUS(status) == 0); };
  EXPECT_EXIT(
      {
        TfLiteDelegate* crashing = ours("segv-select");
        run_add_relu({crashing});
        std::exit(0);
      },
      died, "");
  // Another delegate where the crashing one was (first handed over): it runs.
  TfLiteDelegate* wrapper = libs.wrapped();
  const AddReluRun other = run_add_relu({wrapper});
  ASSERT_TRUE(other.created && other.invoked) << other.reported.all();
  EXPECT_EQ(other.delegate_invokes, 1) << other.reported.all();
  // The crashing delegate again, harmless this time: kept away from the model, and the reporter told.
  TfLiteDelegate* again = ours("normal");
  const AddReluRun kept = run_add_relu({again});
  ASSERT_TRUE(kept.created && kept.invoked) << kept.reported.all();
  EXPECT_EQ(kept.delegate_invokes, 0) << kept.reported.all();
  EXPECT_EQ(kept.y, kExpected);
  EXPECT_TRUE(kept.reported.said("tflite-tflite_test_delegate-")) << kept.reported.all();
  EXPECT_TRUE(kept.reported.said("quarantine")) << kept.reported.all();
  libs.destroy_ours(again);
  libs.destroy(wrapper);
  if (previous) {
    setenv("XDG_STATE_HOME", saved.c_str(), 1);
  } else {
    unsetenv("XDG_STATE_HOME");
  }
}

}  // namespace
