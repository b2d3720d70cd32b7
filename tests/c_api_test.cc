// baton's own application API (baton/c_api.h, baton/baton.hpp), what every door (the CLI, the Python
// module, the TFLite C library, baton-serve) is built on: creation from buffers and files, plans and
// placements, options, profiles and memory, the reports, shared models with their signatures and nodes,
// tensors, and the C++ settings with their log.
#include <gtest/gtest.h>

#include <cstddef>
#include <fstream>
#include <mutex>

#include "baton/baton.hpp"
#include "baton/c_api.h"
#include "test_support.h"
#include "tiny_model.h"

namespace baton::test {
namespace {
// A C API environment whose only plugin folder is `dir`, holding the test pack and `plugins`, at `threads`
// (0: the default).
// `log` (with `log_user`): the environment's log callback, else none (stderr).
baton_environment* c_api_environment(const TempDir& dir, std::initializer_list<const char*> plugins = {},
                                     int32_t threads = 0,
                                     void (*log)(void*, baton_log_level, const char*) = nullptr, void* log_user = nullptr) {
  dir.add_plugin("testpack");
  for (const char* p : plugins) dir.add_plugin(p);
  const char* dirs[] = {dir.path().c_str()};
  baton_environment_options o{};
  o.struct_size = sizeof o;
  o.plugin_dirs = dirs;
  o.plugin_dir_count = 1;
  o.no_default_dirs = 1;
  o.threads = threads;
  o.log = log;
  o.log_user_data = log_user;
  return baton_environment_create(&o);
}

// Inputs resized to no rows: the ADD (a builtin op) has nothing to compute and the host does not invoke it
// (the test pack's ADD fails if it is invoked for an empty output); the custom TimesTwo is invoked still.
TEST(CApi, ABuiltinOpWithNoElementsToComputeIsNotInvoked) {
  TempDir dir;
  baton_environment* env = c_api_environment(dir);
  ASSERT_NE(env, nullptr) << baton_last_error();
  const std::vector<uint8_t> bytes = add_then_double().build();
  baton_interpreter* interp = baton_interpreter_create_from_buffer(env, bytes.data(), bytes.size());
  ASSERT_NE(interp, nullptr) << baton_last_error();
  const int32_t empty[2] = {0, 3};
  ASSERT_EQ(baton_interpreter_resize_input(interp, 0, 2, empty), BATON_OK) << baton_interpreter_last_error(interp);
  ASSERT_EQ(baton_interpreter_resize_input(interp, 1, 2, empty), BATON_OK) << baton_interpreter_last_error(interp);
  EXPECT_EQ(baton_interpreter_invoke(interp), BATON_OK) << baton_interpreter_last_error(interp);
  // Back to [2, 3]: the ADD computes again.
  const int32_t full[2] = {2, 3};
  ASSERT_EQ(baton_interpreter_resize_input(interp, 0, 2, full), BATON_OK);
  ASSERT_EQ(baton_interpreter_resize_input(interp, 1, 2, full), BATON_OK);
  const float a[6] = {1, 1, 1, 1, 1, 1}, b[6] = {0, 1, 2, -3, -4, 5};
  ASSERT_EQ(baton_interpreter_set_input(interp, 0, a, sizeof a), BATON_OK);
  ASSERT_EQ(baton_interpreter_set_input(interp, 1, b, sizeof b), BATON_OK);
  ASSERT_EQ(baton_interpreter_invoke(interp), BATON_OK) << baton_interpreter_last_error(interp);
  float out[6];
  ASSERT_EQ(baton_interpreter_get_output(interp, 0, out, sizeof out), BATON_OK);
  EXPECT_EQ(std::vector<float>(out, out + 6), (std::vector<float>{2, 4, 6, 0, 0, 12}));
  baton_interpreter_destroy(interp);
  baton_environment_destroy(env);
}

TEST(CApi, CreateFromBufferInvokeAndReadOutput) {
  TempDir dir;
  baton_environment* env = c_api_environment(dir);
  ASSERT_NE(env, nullptr) << baton_last_error();
  const std::vector<uint8_t> bytes = add_then_double().build();
  baton_interpreter* interp = baton_interpreter_create_from_buffer(env, bytes.data(), bytes.size());
  ASSERT_NE(interp, nullptr) << baton_last_error();
  EXPECT_EQ(baton_interpreter_input_count(interp), 2);
  EXPECT_EQ(baton_interpreter_input_index(interp, "b"), 1);
  EXPECT_EQ(baton_interpreter_output_index(interp, "d"), 0);
  EXPECT_EQ(baton_interpreter_input_index(interp, "nope"), -1);
  const float a[6] = {1, 1, 1, 1, 1, 1}, b[6] = {0, 1, 2, -3, -4, 5};
  ASSERT_EQ(baton_interpreter_set_input(interp, 0, a, sizeof a), BATON_OK);
  ASSERT_EQ(baton_interpreter_set_input(interp, 1, b, sizeof b), BATON_OK);
  EXPECT_EQ(baton_interpreter_set_input(interp, 1, b, 8), BATON_ERROR);
  EXPECT_NE(std::string(baton_interpreter_last_error(interp)).find("needs 24 bytes, got 8"), std::string::npos);
  ASSERT_EQ(baton_interpreter_invoke(interp), BATON_OK) << baton_interpreter_last_error(interp);
  // The C API has no state folder to pass: the crash journal follows $XDG_STATE_HOME, which is this
  // test's own (state_folder.h), never the user's.
  EXPECT_TRUE(std::filesystem::is_directory(test_state_dir() + "/baton/journal"));
  float out[6];
  ASSERT_EQ(baton_interpreter_get_output(interp, 0, out, sizeof out), BATON_OK);
  EXPECT_EQ(std::vector<float>(out, out + 6), (std::vector<float>{2, 4, 6, 0, 0, 12}));
  const baton_tensor* t = baton_interpreter_output(interp, 0);
  EXPECT_EQ(baton_tensor_get_rank(t), 2);
  EXPECT_EQ(baton_tensor_get_dim(t, 1), 3);
  EXPECT_STREQ(baton_tensor_get_name(t), "d");
  baton_interpreter_destroy(interp);

  const uint8_t garbage[16] = {1, 2, 3};
  EXPECT_EQ(baton_interpreter_create_from_buffer(env, garbage, sizeof garbage), nullptr);
  EXPECT_NE(std::string(baton_last_error()).find("<buffer>"), std::string::npos);
  baton_environment_destroy(env);
}

// The declared shape (-1 for a dynamic dimension) stays what the model says after a resize: a server's
// model metadata reads it (server/).
TEST(CApi, SignatureDimsAreTheModelsAndSurviveAResize) {
  TempDir dir;
  baton_environment* env = c_api_environment(dir);
  ASSERT_NE(env, nullptr) << baton_last_error();
  TinyModel m = add_then_double();
  m.tensors[0].shape_signature = {-1, 3};  // a: dynamic batch; b keeps no signature
  const std::vector<uint8_t> bytes = m.build();
  baton_interpreter* interp = baton_interpreter_create_from_buffer(env, bytes.data(), bytes.size());
  ASSERT_NE(interp, nullptr) << baton_last_error();
  const baton_tensor* a = baton_interpreter_input(interp, 0);
  const baton_tensor* b = baton_interpreter_input(interp, 1);
  EXPECT_EQ(baton_tensor_get_signature_dim(a, 0), -1);
  EXPECT_EQ(baton_tensor_get_signature_dim(a, 1), 3);
  EXPECT_EQ(baton_tensor_get_signature_dim(b, 0), 2);
  EXPECT_EQ(baton_tensor_get_signature_dim(b, 1), 3);
  EXPECT_EQ(baton_tensor_get_signature_dim(b, 2), -1);  // out of range
  const int32_t dims[2] = {4, 3};
  ASSERT_EQ(baton_interpreter_resize_input(interp, 1, 2, dims), BATON_OK) << baton_interpreter_last_error(interp);
  EXPECT_EQ(baton_tensor_get_dim(baton_interpreter_input(interp, 1), 0), 4);
  EXPECT_EQ(baton_tensor_get_signature_dim(baton_interpreter_input(interp, 1), 0), 2);
  baton_interpreter_destroy(interp);
  baton_environment_destroy(env);
}

// The plan and the placement of every node, through the public API alone: a delegate that takes both
// nodes of ADD -> TimesTwo puts them in its partition 0; without it the test pack runs them.
TEST(CApi, PlanAndPlacementOfEachNode) {
  TempDir dir;
  baton_environment* env = c_api_environment(dir, {"deleg_a"});
  ASSERT_NE(env, nullptr) << baton_last_error();
  const std::vector<uint8_t> bytes = add_then_double().build();
  baton_interpreter* interp = baton_interpreter_create_from_buffer(env, bytes.data(), bytes.size());
  ASSERT_NE(interp, nullptr) << baton_last_error();
  ASSERT_EQ(baton_interpreter_node_count(interp), 2);
  for (int32_t i = 0; i < 2; ++i) {
    baton_node_placement p{};
    p.struct_size = sizeof p;
    ASSERT_EQ(baton_interpreter_node_placement(interp, i, &p), BATON_OK);
    EXPECT_STREQ(p.op, i == 0 ? "ADD v1" : "custom TimesTwo v1");
    EXPECT_STREQ(p.kind, "delegate");
    EXPECT_STREQ(p.plugin, "deleg-a");
    EXPECT_EQ(p.partition, 0);
  }
  EXPECT_STREQ(baton_interpreter_plan(interp, BATON_PLAN_SUMMARY), "deleg-a: 2 of 2 nodes in 1 partition");
  const std::string json = baton_interpreter_plan(interp, BATON_PLAN_JSON);
  EXPECT_NE(json.find("\"placement\":{\"kind\":\"delegate\",\"plugin\":\"deleg-a\",\"partition\":0}"),
            std::string::npos)
      << json;
  EXPECT_NE(std::string(baton_interpreter_plan(interp, BATON_PLAN_TEXT)).find("deleg-a (partition 0)"), std::string::npos);
  EXPECT_EQ(baton_interpreter_plan(interp, static_cast<baton_plan_format>(9)), nullptr);
  baton_node_placement p{};
  p.struct_size = sizeof p;
  EXPECT_EQ(baton_interpreter_node_placement(interp, 2, &p), BATON_INVALID_ARGUMENT);
  EXPECT_STREQ(baton_interpreter_last_error(interp), "node 2 does not exist (the entry subgraph has 2 nodes)");
  baton_interpreter_destroy(interp);
  baton_environment_destroy(env);

  // Without delegates (no_delegates): the test pack runs both nodes.
  TempDir packs_only;
  packs_only.add_plugin("testpack");
  baton_environment_options o{};
  o.struct_size = sizeof o;
  const char* dirs[] = {packs_only.path().c_str()};
  o.plugin_dirs = dirs;
  o.plugin_dir_count = 1;
  o.no_default_dirs = 1;
  o.no_delegates = 1;
  baton_environment* plain = baton_environment_create(&o);
  ASSERT_NE(plain, nullptr) << baton_last_error();
  {
    baton_interpreter* in = baton_interpreter_create_from_buffer(plain, bytes.data(), bytes.size());
    ASSERT_NE(in, nullptr) << baton_last_error();
    baton_node_placement q{};
    q.struct_size = sizeof q;
    ASSERT_EQ(baton_interpreter_node_placement(in, 1, &q), BATON_OK);
    EXPECT_STREQ(q.kind, "op-pack");
    EXPECT_STREQ(q.plugin, "testpack");
    EXPECT_EQ(q.partition, -1);
    EXPECT_STREQ(baton_interpreter_plan(in, BATON_PLAN_SUMMARY), "testpack: 2 nodes");
    baton_interpreter_destroy(in);
  }
  baton_environment_destroy(plain);
}

// What the CLI's run, bench and plan take from the public API: interpreter options (strict, signature),
// the environment's thread count, per-step profiling and the memory summary.
TEST(CApi, OptionsProfileAndMemory) {
  TempDir dir;
  // One thread: more than the CPUs the process may use would be capped (with a warning).
  baton_environment* env = c_api_environment(dir, {}, 1);
  ASSERT_NE(env, nullptr) << baton_last_error();
  EXPECT_EQ(baton_environment_threads(env), 1);
  const std::vector<uint8_t> bytes = add_then_double().build();
  {
    std::ofstream f(dir.file("model.tflite"), std::ios::binary);
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  // Strict: no delegate takes the nodes, so creation fails and says which node would run where.
  baton_interpreter_options io{};
  io.struct_size = sizeof io;
  io.strict = 1;
  EXPECT_EQ(baton_interpreter_create_with_options(env, dir.file("model.tflite").c_str(), &io), nullptr);
  EXPECT_NE(std::string(baton_last_error()).find("would run on op pack testpack"), std::string::npos) << baton_last_error();
  // A struct_size that ends before `strict` (an application built against older headers): not strict.
  io.struct_size = offsetof(baton_interpreter_options, strict);
  baton_interpreter* interp = baton_interpreter_create_with_options(env, dir.file("model.tflite").c_str(), &io);
  ASSERT_NE(interp, nullptr) << baton_last_error();

  const float a[6] = {1, 1, 1, 1, 1, 1}, b[6] = {0, 1, 2, -3, -4, 5};
  ASSERT_EQ(baton_interpreter_set_input(interp, 0, a, sizeof a), BATON_OK);
  ASSERT_EQ(baton_interpreter_set_input(interp, 1, b, sizeof b), BATON_OK);
  baton_interpreter_set_profiling(interp, 1);
  for (int run = 0; run < 2; ++run) ASSERT_EQ(baton_interpreter_invoke(interp), BATON_OK) << baton_interpreter_last_error(interp);
  ASSERT_EQ(baton_interpreter_step_count(interp), 2);
  baton_step_profile p{};
  p.struct_size = sizeof p;
  ASSERT_EQ(baton_interpreter_step_profile(interp, 0, &p), BATON_OK);
  EXPECT_STREQ(p.op, "ADD");
  EXPECT_STREQ(p.plugin, "testpack");
  EXPECT_EQ(p.node, 0);
  EXPECT_GT(p.seconds, 0.0);
  ASSERT_EQ(baton_interpreter_step_profile(interp, 1, &p), BATON_OK);
  EXPECT_EQ(p.node, 1);
  EXPECT_EQ(baton_interpreter_step_profile(interp, 2, &p), BATON_INVALID_ARGUMENT);
  EXPECT_STREQ(baton_interpreter_last_error(interp), "step 2 does not exist (the entry subgraph has 2 steps)");
  baton_interpreter_set_profiling(interp, 0);  // zeroes the times
  ASSERT_EQ(baton_interpreter_step_profile(interp, 0, &p), BATON_OK);
  EXPECT_EQ(p.seconds, 0.0);

  baton_interpreter_memory m{};
  m.struct_size = sizeof m;
  ASSERT_EQ(baton_interpreter_memory_info(interp, &m), BATON_OK);
  // a, b, the ADD's output and d: four float [2, 3] tensors at least, in the arena and side by side (the
  // arena may hold more: alignment, and red zones under AddressSanitizer).
  EXPECT_GE(m.naive_bytes, 4u * 6 * sizeof(float));
  EXPECT_GE(m.arena_bytes, 6u * sizeof(float));
  EXPECT_EQ(m.folded_nodes, 0u);
  EXPECT_EQ(m.dropped_nodes, 0u);
  EXPECT_EQ(baton_interpreter_memory_info(interp, nullptr), BATON_INVALID_ARGUMENT);
  baton_interpreter_destroy(interp);
  baton_environment_destroy(env);
}

// What the CLI's plugins and inspect take from the public API: the environment's report, a model's report
// read without plugins, and the byte-limit syntax of the options.
TEST(CApi, EnvironmentAndModelReports) {
  TempDir dir;
  baton_environment* env = c_api_environment(dir, {"deleg_a"}, 1);
  ASSERT_NE(env, nullptr) << baton_last_error();
  const std::string text = baton_environment_report(env, BATON_PLAN_TEXT);
  EXPECT_NE(text.find("2 plugin(s) loaded:"), std::string::npos) << text;
  EXPECT_NE(text.find("\ndelegate chain: deleg-a\n"), std::string::npos) << text;
  const std::string json = baton_environment_report(env, BATON_PLAN_JSON);
  EXPECT_NE(json.find("\"name\":\"testpack\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"delegate_chain\":[\"deleg-a\"]"), std::string::npos) << json;
  // What `baton check-plugin` reads of a plugin: the name its file gives, and whether a delegate selects
  // nodes itself (deleg_a is built as of ABI 1.1, before select_nodes).
  EXPECT_NE(json.find("\"name_from_file\":\"deleg-a\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"selects_nodes\":false"), std::string::npos) << json;
  EXPECT_EQ(json.front(), '{');
  EXPECT_EQ(json.back(), '}');
  EXPECT_EQ(baton_environment_report(env, BATON_PLAN_DOT), nullptr);
  EXPECT_STREQ(baton_last_error(), "baton_environment_report: format 3 is not BATON_PLAN_TEXT or BATON_PLAN_JSON");
  EXPECT_EQ(baton_environment_report(nullptr, BATON_PLAN_TEXT), nullptr);
  ASSERT_EQ(baton_environment_delegate_count(env), 1);
  EXPECT_STREQ(baton_environment_delegate_name(env, 0), "deleg-a");
  EXPECT_EQ(baton_environment_delegate_name(env, 1), nullptr);
  baton_environment_destroy(env);

  const std::vector<uint8_t> bytes = add_then_double().build();
  {
    std::ofstream f(dir.file("model.tflite"), std::ios::binary);
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  const std::string path = dir.file("model.tflite");
  const std::string model = baton_model_report(path.c_str(), BATON_PLAN_TEXT);
  EXPECT_EQ(model.rfind("model: " + path + " (" + std::to_string(bytes.size()) + " bytes", 0), 0u) << model;
  EXPECT_NE(model.find("inputs:\n  0: a FLOAT32 [2,3] (tensor 0)\n  1: b FLOAT32 [2,3] (tensor 1)\n"), std::string::npos) << model;
  const std::string model_json = baton_model_report(path.c_str(), BATON_PLAN_JSON);
  EXPECT_NE(model_json.find("\"ops\":[{\"op\":\"ADD\",\"version\":1,\"count\":1}"), std::string::npos) << model_json;
  EXPECT_EQ(baton_model_report(path.c_str(), BATON_PLAN_SUMMARY), nullptr);
  EXPECT_EQ(baton_model_report(dir.file("missing.tflite").c_str(), BATON_PLAN_TEXT), nullptr);
  EXPECT_NE(std::string(baton_last_error()).find(dir.file("missing.tflite")), std::string::npos) << baton_last_error();

  size_t limit = 7;
  EXPECT_EQ(baton_parse_byte_limit("64M", &limit), 1);
  EXPECT_EQ(limit, size_t(64) << 20);
  EXPECT_EQ(baton_parse_byte_limit("none", &limit), 1);
  EXPECT_EQ(limit, SIZE_MAX);
  limit = 7;
  for (const char* bad : {"", "12Q", "-1", "M"}) {
    EXPECT_EQ(baton_parse_byte_limit(bad, &limit), 0) << bad;
    EXPECT_EQ(limit, 7u) << bad;
  }
}

// What the Python module and other bindings take from the C API: one model shared by interpreters (and
// outliving its handle), its signatures, every tensor with its quantization, shape signature and memory,
// allocate_tensors after a resize, and the log into the application's callback.
TEST(CApi, SharedModelSignaturesTensorsAndLog) {
  TempDir dir;
  struct Log {
    std::mutex mutex;
    std::vector<std::string> lines;
  } log;
  auto append = [](void* user, baton_log_level, const char* message) {
    auto* l = static_cast<Log*>(user);
    std::lock_guard<std::mutex> lock(l->mutex);
    l->lines.emplace_back(message);
  };
  baton_environment* env = c_api_environment(dir, {}, 1, append, &log);
  ASSERT_NE(env, nullptr) << baton_last_error();

  TinyModel tiny = add_then_double();
  tiny.tensors[0].shape_signature = {-1, 3};
  tiny.tensors[2].scales = {0.25f};
  tiny.tensors[2].zero_points = {7};
  tiny.signatures = {{"serve", 0, {{"x", 0}, {"y", 1}}, {{"out", 3}}}};
  const std::vector<uint8_t> bytes = tiny.build();
  baton_model* model = baton_model_create_from_buffer(env, bytes.data(), bytes.size());
  ASSERT_NE(model, nullptr) << baton_last_error();
  ASSERT_EQ(baton_model_signature_count(model), 1);
  EXPECT_STREQ(baton_model_signature_key(model, 0), "serve");
  EXPECT_EQ(baton_model_signature_subgraph(model, 0), 0);
  EXPECT_EQ(baton_model_signature_tensor_count(model, 0, 0), 2);
  EXPECT_STREQ(baton_model_signature_tensor_name(model, 0, 0, 1), "y");
  EXPECT_EQ(baton_model_signature_tensor_index(model, 0, 0, 1), 1);
  EXPECT_STREQ(baton_model_signature_tensor_name(model, 0, 1, 0), "out");
  EXPECT_EQ(baton_model_signature_tensor_index(model, 0, 1, 0), 3);
  EXPECT_EQ(baton_model_signature_key(model, 1), nullptr);
  EXPECT_EQ(baton_model_signature_tensor_name(model, 0, 1, 1), nullptr);
  EXPECT_EQ(baton_model_signature_tensor_index(model, 0, 0, -1), -1);

  baton_interpreter* first = baton_interpreter_create_from_model(env, model, nullptr);
  ASSERT_NE(first, nullptr) << baton_last_error();
  baton_interpreter* second = baton_interpreter_create_from_model(env, model, nullptr);
  ASSERT_NE(second, nullptr) << baton_last_error();
  baton_model_destroy(model);  // the interpreters keep what they need

  const float a[6] = {1, -2, 3, -4, 5, -6}, b[6] = {0.5f, 1, -4, 3, 0, 7};
  for (baton_interpreter* in : {first, second}) {
    ASSERT_EQ(baton_interpreter_set_input(in, 0, a, sizeof a), BATON_OK);
    ASSERT_EQ(baton_interpreter_set_input(in, 1, b, sizeof b), BATON_OK);
    ASSERT_EQ(baton_interpreter_invoke(in), BATON_OK) << baton_interpreter_last_error(in);
    float d[6];
    ASSERT_EQ(baton_interpreter_get_output(in, 0, d, sizeof d), BATON_OK);
    // relu(a + b) = {1.5, 0, 0, 0, 5, 1}, times two.
    EXPECT_EQ(std::vector<float>(d, d + 6), (std::vector<float>{3, 0, 0, 0, 10, 2}));
  }

  EXPECT_EQ(baton_interpreter_entry_subgraph(first), 0);
  ASSERT_EQ(baton_interpreter_tensor_count(first), 4);
  EXPECT_EQ(baton_interpreter_tensor(first, 4), nullptr);
  const baton_tensor* c = baton_interpreter_tensor(first, 2);
  ASSERT_NE(c, nullptr);
  EXPECT_STREQ(baton_tensor_get_name(c), "c");
  EXPECT_EQ(baton_tensor_get_index(c), 2);
  EXPECT_EQ(baton_tensor_is_constant(c), 0);
  EXPECT_EQ(baton_tensor_is_variable(c), 0);
  baton_quantization q{};
  q.struct_size = sizeof q;
  baton_tensor_get_quantization(c, &q);
  ASSERT_EQ(q.scale_count, 1);
  EXPECT_EQ(q.scales[0], 0.25f);
  EXPECT_EQ(q.zero_points[0], 7);
  // The intermediate c = relu(a + b), read in place after the invoke.
  const auto* c_data = static_cast<const float*>(baton_interpreter_tensor_data(first, 2));
  ASSERT_NE(c_data, nullptr);
  EXPECT_EQ(std::vector<float>(c_data, c_data + 6), (std::vector<float>{1.5f, 0, 0, 0, 5, 1}));
  EXPECT_EQ(baton_tensor_get_data(c), c_data);
  const baton_tensor* x = baton_interpreter_tensor(first, 0);
  EXPECT_EQ(baton_tensor_get_signature_rank(x), 2);
  EXPECT_EQ(baton_tensor_get_signature_dim(x, 0), -1);
  EXPECT_EQ(baton_tensor_get_signature_rank(c), 0);

  // After a resize, no memory to write until allocate_tensors (or invoke) plans it for the new shape.
  const int32_t dims[2] = {4, 3};
  ASSERT_EQ(baton_interpreter_resize_input(first, 0, 2, dims), BATON_OK);
  ASSERT_EQ(baton_interpreter_resize_input(first, 1, 2, dims), BATON_OK);
  EXPECT_EQ(baton_interpreter_tensor_data(first, 0), nullptr);
  ASSERT_EQ(baton_interpreter_allocate_tensors(first), BATON_OK) << baton_interpreter_last_error(first);
  auto* x_data = static_cast<float*>(baton_interpreter_tensor_data(first, 0));
  ASSERT_NE(x_data, nullptr);
  EXPECT_EQ(baton_tensor_get_byte_size(x), 12 * sizeof(float));
  for (int i = 0; i < 12; ++i) x_data[i] = static_cast<float>(i);
  auto* y_data = static_cast<float*>(baton_interpreter_tensor_data(first, 1));
  ASSERT_NE(y_data, nullptr);
  for (int i = 0; i < 12; ++i) y_data[i] = -1.0f;
  ASSERT_EQ(baton_interpreter_invoke(first), BATON_OK) << baton_interpreter_last_error(first);
  const auto* d_data = static_cast<const float*>(baton_interpreter_tensor_data(first, 3));
  ASSERT_NE(d_data, nullptr);
  EXPECT_EQ(d_data[0], 0.0f);   // relu(0 - 1) * 2
  EXPECT_EQ(d_data[11], 20.0f);  // relu(11 - 1) * 2

  baton_interpreter_destroy(first);
  baton_interpreter_destroy(second);
  {
    std::lock_guard<std::mutex> lock(log.mutex);
    bool named = false;
    for (const std::string& line : log.lines) named = named || line.find("testpack") != std::string::npos;
    EXPECT_TRUE(named) << "the log callback got " << log.lines.size() << " messages, none naming testpack";
  }
  EXPECT_EQ(baton_model_create_from_file(env, dir.file("missing.tflite").c_str()), nullptr);
  EXPECT_NE(std::string(baton_last_error()).find(dir.file("missing.tflite")), std::string::npos) << baton_last_error();
  baton_environment_destroy(env);
}

// A model's nodes as the file gives them, for tools that decide what could run them before any interpreter
// exists (`baton check-plugin`): op names, custom names, versions, types and state.
TEST(CApi, ModelNodesAsTheFileGivesThem) {
  TempDir dir;
  baton_environment* env = c_api_environment(dir, {}, 1, nullptr, nullptr);
  ASSERT_NE(env, nullptr) << baton_last_error();
  TinyModel tiny = add_then_double();
  tiny.tensors[1].is_variable = true;              // b: state kept across invokes
  tiny.tensors[2].type = 9;                        // c: INT8, the type of TimesTwo's first input
  tiny.tensors.push_back({{6}, 0, {}, "e"});
  tiny.ops.push_back({22, "", 1, {3}, {4}});       // RESHAPE v1: d -> e
  tiny.ops.push_back({146, "", 1, {}, {}});        // RANDOM_STANDARD_NORMAL without tensors
  tiny.ops[0].version = 3;
  tiny.outputs = {4};
  const std::vector<uint8_t> bytes = tiny.build();
  baton_model* model = baton_model_create_from_buffer(env, bytes.data(), bytes.size());
  ASSERT_NE(model, nullptr) << baton_last_error();
  ASSERT_EQ(baton_model_subgraph_count(model), 1);
  const int32_t count = baton_model_node_count(model, 0);
  ASSERT_EQ(count, 4);
  EXPECT_EQ(baton_model_node_count(model, 1), -1);
  baton_model_node n{};
  n.struct_size = sizeof n;
  ASSERT_EQ(baton_model_get_node(model, 0, 0, &n), BATON_OK);
  EXPECT_STREQ(n.op, "ADD");
  EXPECT_EQ(n.op_code, BATON_OP_ADD);
  EXPECT_EQ(n.version, 3);
  EXPECT_EQ(n.type, BATON_TYPE_FLOAT32);
  EXPECT_EQ(n.runtime, 0);
  EXPECT_EQ(n.stateful, 1);  // b is a variable
  ASSERT_EQ(baton_model_get_node(model, 0, 1, &n), BATON_OK);
  EXPECT_STREQ(n.op, "TimesTwo");
  EXPECT_EQ(n.op_code, BATON_OP_CUSTOM);
  EXPECT_EQ(n.type, BATON_TYPE_INT8);
  EXPECT_EQ(n.stateful, 0);
  ASSERT_EQ(baton_model_get_node(model, 0, 2, &n), BATON_OK);
  EXPECT_STREQ(n.op, "RESHAPE");
  EXPECT_EQ(n.type, BATON_TYPE_FLOAT32);  // d
  EXPECT_EQ(n.stateful, 0);
  ASSERT_EQ(baton_model_get_node(model, 0, 3, &n), BATON_OK);
  EXPECT_STREQ(n.op, "RANDOM_STANDARD_NORMAL");
  EXPECT_EQ(n.type, -1);
  EXPECT_EQ(n.stateful, 1);
  // An older caller's smaller struct is filled only as far as it reaches.
  baton_model_node small{};
  small.struct_size = offsetof(baton_model_node, version);
  small.version = -7;
  ASSERT_EQ(baton_model_get_node(model, 0, 0, &small), BATON_OK);
  EXPECT_STREQ(small.op, "ADD");
  EXPECT_EQ(small.version, -7);
  EXPECT_EQ(baton_model_get_node(model, 0, count, &n), BATON_INVALID_ARGUMENT);
  EXPECT_EQ(baton_model_get_node(model, 0, 0, nullptr), BATON_INVALID_ARGUMENT);
  baton_model_destroy(model);
  baton_environment_destroy(env);
}

// The C++ API's settings are the C options as values, and its log is any callable, kept as long as the
// environment: the tools' environments (the CLI's, check-plugin's) are made this way.
TEST(CppApi, EnvironmentSettingsAndLog) {
  TempDir dir;
  dir.add_plugin("testpack");
  dir.add_plugin("deleg_a");
  std::mutex mutex;
  std::vector<std::string> lines;
  api::Environment::Settings s;
  s.plugin_dirs = {dir.path()};
  s.no_default_dirs = true;
  s.threads = 1;
  s.no_delegates = true;
  s.log = [&](baton_log_level, const char* message) {
    std::lock_guard<std::mutex> lock(mutex);
    lines.emplace_back(message);
  };
  {
    api::Environment env(s);
    s.log = nullptr;  // the environment keeps its own copy
    EXPECT_EQ(env.threads(), 1);
    EXPECT_EQ(baton_environment_delegate_count(env.get()), 0);  // no_delegates
    const std::string report = env.report(BATON_PLAN_JSON);
    EXPECT_NE(report.find("\"name\":\"testpack\""), std::string::npos) << report;
    EXPECT_NE(report.find("\"name\":\"deleg-a\""), std::string::npos) << report;
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    bool named = false;
    for (const std::string& line : lines) named = named || line.find("testpack") != std::string::npos;
    EXPECT_TRUE(named) << "the log got " << lines.size() << " messages, none naming testpack";
  }
  s.plugin_dirs = {dir.file("missing")};
  s.config_path = dir.file("missing.conf");
  try {
    api::Environment bad(s);
    FAIL() << "an environment with a missing config file";
  } catch (const api::Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing.conf"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace baton::test
