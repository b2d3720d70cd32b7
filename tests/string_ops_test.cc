// String tensors through the public C API: the cases of tests/data/string-cases (made by
// tools/make-string-cases.sh: our own models of every op TFLite 2.9 runs on strings, with the outputs of
// the native TFLite 2.9 library) run by the builtin pack, every output byte for byte (a string output as
// TFLite's packed buffer); and the errors a user meets: a string input never set, a malformed buffer
// given or in the model, a resize that drops an input's value, string shapes TFLite refuses; and string
// .npy files through `baton run`.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "baton/baton.hpp"
#include "baton/c_api.h"
#include "baton/string_tensor.hpp"
#include "npy.h"
#include "test_support.h"

namespace baton::test {
namespace {

namespace fs = std::filesystem;

std::string cases_dir() { return std::string(BATON_SOURCE_ROOT) + "/tests/data/string-cases"; }

std::vector<std::string> cases() {
  std::vector<std::string> out;
  if (!fs::is_directory(cases_dir())) return out;
  for (const auto& e : fs::directory_iterator(cases_dir())) {
    if (e.is_directory() && e.path().filename() != "refused") out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::vector<uint8_t> packed(const std::vector<std::string>& values) {
  strings::PackedWriter w;
  for (const std::string& v : values) w.add(v);
  return w.packed();
}

// The builtin pack alone (in process, or in a process of its own).
struct Env {
  explicit Env(bool isolate = false) {
    const char* dirs[] = {BUILTIN_PACK_DIR};
    const char* isolated[] = {"builtin"};
    baton_environment_options o{};
    o.struct_size = sizeof o;
    o.plugin_dirs = dirs;
    o.plugin_dir_count = 1;
    o.no_default_dirs = 1;
    o.threads = 1;
    if (isolate) {
      o.isolate = isolated;
      o.isolate_count = 1;
    }
    env = baton_environment_create(&o);
  }
  ~Env() { baton_environment_destroy(env); }
  baton_environment* env = nullptr;
};

struct Interp {
  Interp(baton_environment* env, const std::string& path) : p(baton_interpreter_create_from_file(env, path.c_str())) {}
  Interp(baton_environment* env, const std::vector<uint8_t>& bytes)
      : p(baton_interpreter_create_from_buffer(env, bytes.data(), bytes.size())) {}
  ~Interp() { baton_interpreter_destroy(p); }
  std::string error() const { return baton_interpreter_last_error(p); }
  baton_interpreter* p = nullptr;
};

// Feeds DIR/in_I.str (a string input's packed buffer) or DIR/in_I.npy.
void set_inputs(baton_interpreter* in, const std::string& dir) {
  for (int i = 0; i < baton_interpreter_input_count(in); ++i) {
    const std::string base = dir + "in_" + std::to_string(i);
    std::vector<uint8_t> bytes;
    if (fs::exists(base + ".str")) {
      ASSERT_EQ(baton_tensor_get_type(baton_interpreter_input(in, i)), BATON_TYPE_STRING) << base;
      bytes = read_bytes(base + ".str");
    } else {
      auto arr = tool::read_npy(base + ".npy");
      ASSERT_TRUE(arr) << arr.error();
      bytes = arr->data;
    }
    ASSERT_EQ(baton_interpreter_set_input(in, i, bytes.data(), bytes.size()), BATON_OK)
        << base << ": " << baton_interpreter_last_error(in);
  }
}

// Every output byte for byte against DIR/out_O.str or DIR/out_O.npy (with its shape); on a `second`
// invoke against DIR/out_O.second.* where TFLite's second invoke gave another value (a hash table kept
// from the first).
void expect_outputs(baton_interpreter* in, const std::string& dir, const std::string& what, bool second = false) {
  for (int o = 0; o < baton_interpreter_output_count(in); ++o) {
    const baton_tensor* t = baton_interpreter_output(in, o);
    std::string base = dir + "out_" + std::to_string(o);
    if (second && (fs::exists(base + ".second.str") || fs::exists(base + ".second.npy"))) base += ".second";
    std::vector<uint8_t> want;
    std::vector<int32_t> want_shape;
    const bool is_string = fs::exists(base + ".str");
    if (is_string) {
      want = read_bytes(base + ".str");
    } else {
      auto arr = tool::read_npy(base + ".npy");
      ASSERT_TRUE(arr) << arr.error();
      want = arr->data;
      want_shape = arr->shape;
    }
    ASSERT_EQ(baton_tensor_get_type(t) == BATON_TYPE_STRING, is_string) << what << " output " << o;
    std::vector<int32_t> shape;
    for (int d = 0; d < baton_tensor_get_rank(t); ++d) shape.push_back(baton_tensor_get_dim(t, d));
    if (is_string) {
      // A string output is a vector or has the shape its count fills.
      int64_t count = 1;
      for (int32_t d : shape) count *= d;
      int32_t want_count = 0;
      std::memcpy(&want_count, want.data(), 4);
      EXPECT_EQ(count, want_count) << what << " output " << o;
    } else {
      EXPECT_EQ(shape, want_shape) << what << " output " << o;
    }
    std::vector<uint8_t> got(baton_tensor_get_byte_size(t));
    ASSERT_EQ(baton_interpreter_get_output(in, o, got.data(), got.size()), BATON_OK) << baton_interpreter_last_error(in);
    EXPECT_EQ(got, want) << what << " output " << o << ": " << got.size() << " bytes, want " << want.size();
  }
}

class StringCase : public ::testing::TestWithParam<std::string> {};

TEST_P(StringCase, MatchesTFLiteByteForByte) {
  const std::string dir = cases_dir() + "/" + GetParam() + "/";
  Env e;
  ASSERT_NE(e.env, nullptr) << baton_last_error();
  Interp in(e.env, dir + "model.tflite");
  ASSERT_NE(in.p, nullptr) << baton_last_error();
  ASSERT_NO_FATAL_FAILURE(set_inputs(in.p, dir));
  ASSERT_EQ(baton_interpreter_invoke(in.p), BATON_OK) << in.error();
  ASSERT_NO_FATAL_FAILURE(expect_outputs(in.p, dir, GetParam()));
  // Again in the same interpreter: string outputs keep or grow their memory from one invoke to the next.
  ASSERT_EQ(baton_interpreter_invoke(in.p), BATON_OK) << in.error();
  expect_outputs(in.p, dir, GetParam() + " (second invoke)", /*second=*/true);
}

INSTANTIATE_TEST_SUITE_P(Cases, StringCase, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param; });

TEST(StringCases, AreAllThere) { EXPECT_GE(cases().size(), 25u); }

// The chain case's inputs through the C++ wrapper, with other strings each invoke: the computed strings
// (HASHTABLE_LOOKUP, then GATHER) change size between invokes.
TEST(StringTensors, ChainRunsWithOtherStringsThroughTheCppApi) {
  const std::string path = cases_dir() + "/chain_lookup_gather_equal/model.tflite";
  const char* dirs[] = {BUILTIN_PACK_DIR};
  baton_environment_options o{};
  o.struct_size = sizeof o;
  o.plugin_dirs = dirs;
  o.plugin_dir_count = 1;
  o.no_default_dirs = 1;
  api::Environment env(&o);
  api::Interpreter in(env, path);
  // lookups (keys 1, 3, 5 hold "one", "three", "five"), gather indices, strings to compare with.
  in.set_input<int32_t>(0, {5, 1, 3, 8});
  in.set_input<int32_t>(1, {3, 0, 0});
  in.set_input_strings(2, {"", "five", "one"});
  in.invoke();
  EXPECT_EQ(in.output_strings(1), (std::vector<std::string>{"five", "one", "three", ""}));
  EXPECT_EQ(in.output_values<uint8_t>(0), (std::vector<uint8_t>{1, 1, 0}));  // "", "five", "five"
  in.set_input<int32_t>(0, {3, 3, 3, 3});
  in.set_input<int32_t>(1, {1, 2, 3});
  in.set_input_strings(2, {"three", "three", "x"});
  in.invoke();
  EXPECT_EQ(in.output_strings(1), (std::vector<std::string>{"three", "three", "three", "three"}));
  EXPECT_EQ(in.output_values<uint8_t>(0), (std::vector<uint8_t>{1, 1, 0}));
}

TEST(StringTensors, AnInputNeverSetFailsInvokeNamingIt) {
  Env e;
  Interp in(e.env, cases_dir() + "/skip_gram_2_skip1/model.tflite");
  ASSERT_NE(in.p, nullptr) << baton_last_error();
  EXPECT_EQ(baton_interpreter_invoke(in.p), BATON_ERROR);
  EXPECT_NE(in.error().find("\"t0\" is a string tensor without a value"), std::string::npos) << in.error();
}

TEST(StringTensors, AMalformedInputBufferIsRefusedWithTheReason) {
  Env e;
  Interp in(e.env, cases_dir() + "/equal_str_broadcast/model.tflite");  // input 1: 3 strings
  ASSERT_NE(in.p, nullptr) << baton_last_error();
  std::vector<uint8_t> two = packed({"a", "b"});
  EXPECT_EQ(baton_interpreter_set_input(in.p, 1, two.data(), two.size()), BATON_ERROR);
  EXPECT_NE(in.error().find("holds 2 strings where its shape has 3"), std::string::npos) << in.error();
  std::vector<uint8_t> past = packed({"a", "b", "c"});
  past[4 + 4 * 3] = 99;  // the last offset, past the buffer's 23 bytes
  EXPECT_EQ(baton_interpreter_set_input(in.p, 1, past.data(), past.size()), BATON_ERROR);
  EXPECT_NE(in.error().find("offset 3 (99) is past its 23 bytes"), std::string::npos) << in.error();
  std::vector<uint8_t> short_header(6, 0);
  EXPECT_EQ(baton_interpreter_set_input(in.p, 1, short_header.data(), short_header.size()), BATON_ERROR);
}

TEST(StringTensors, ResizingAStringInputDropsItsValue) {
  Env e;
  Interp in(e.env, cases_dir() + "/equal_str_scalar/model.tflite");  // [4] == scalar
  ASSERT_NE(in.p, nullptr) << baton_last_error();
  const std::vector<uint8_t> four = packed({"x", "y", "", "x"}), one = packed({"x"});
  ASSERT_EQ(baton_interpreter_set_input(in.p, 0, four.data(), four.size()), BATON_OK) << in.error();
  ASSERT_EQ(baton_interpreter_set_input(in.p, 1, one.data(), one.size()), BATON_OK) << in.error();
  ASSERT_EQ(baton_interpreter_invoke(in.p), BATON_OK) << in.error();
  const int32_t two[] = {2};
  ASSERT_EQ(baton_interpreter_resize_input(in.p, 0, 1, two), BATON_OK) << in.error();
  EXPECT_EQ(baton_interpreter_invoke(in.p), BATON_ERROR);
  EXPECT_NE(in.error().find("without a value"), std::string::npos) << in.error();
  const std::vector<uint8_t> pair = packed({"z", "x"});
  ASSERT_EQ(baton_interpreter_set_input(in.p, 0, pair.data(), pair.size()), BATON_OK) << in.error();
  ASSERT_EQ(baton_interpreter_invoke(in.p), BATON_OK) << in.error();
  bool out[2] = {true, false};
  ASSERT_EQ(baton_interpreter_get_output(in.p, 0, out, sizeof out), BATON_OK) << in.error();
  EXPECT_FALSE(out[0]);
  EXPECT_TRUE(out[1]);
}

// Finds the packed buffer of `strings` in a model's bytes.
size_t find_packed(const std::vector<uint8_t>& model, const std::vector<std::string>& strings) {
  const std::vector<uint8_t> needle = packed(strings);
  auto it = std::search(model.begin(), model.end(), needle.begin(), needle.end());
  return it == model.end() ? std::string::npos : static_cast<size_t>(it - model.begin());
}

TEST(StringTensors, AMalformedConstantStringBufferFailsTheLoadNamingTheTensor) {
  std::vector<uint8_t> model = read_bytes(cases_dir() + "/hashtable_lookup_str/model.tflite");
  const size_t at = find_packed(model, {"one", "three", "", "seven and a half"});
  ASSERT_NE(at, std::string::npos);
  model[at + 4 + 4 * 2] = 0xff;  // offset 2 points past the buffer
  Env e;
  Interp in(e.env, model);
  EXPECT_EQ(in.p, nullptr);
  const std::string error = baton_last_error();
  EXPECT_NE(error.find("tensor 2 \"t2\": buffer"), std::string::npos) << error;
  EXPECT_NE(error.find("is not a string buffer: offset 2"), std::string::npos) << error;
}

// The models TFLite 2.9 refuses (tools/string-models.mjs's refused cases: GATHER's string params and
// HASHTABLE_LOOKUP's string values of rank 2, LESS on strings, a hash table looked up before its import,
// of a kind TFLite does not have, or imported from keys and values of two shapes) baton refuses too,
// naming the node.
TEST(StringTensors, WhatTFLiteRefusesIsRefusedWithTheReason) {
  const struct {
    std::string name, node, reason;
  } refused[] = {
      {"gather_str_rank2", "node 0 (GATHER", "string params must have rank 1"},
      {"hashtable_lookup_str_rank2", "node 0 (HASHTABLE_LOOKUP", "string values must have rank 1"},
      {"less_str", "node 0 (LESS", "input type STRING not supported"},
      {"hashtable_find_before_import", "node 1 (HASHTABLE_FIND",
       "hash table 1 (STRING keys to INT64 values) is looked up before anything was imported into it"},
      {"hashtable_int64_to_int64", "node 0 (HASHTABLE", "table 1 would map INT64 keys to INT64 values"},
      {"hashtable_import_shapes_differ", "node 1 (HASHTABLE_IMPORT", "keys [3] and values [2] must have one shape"},
  };
  Env e;
  for (const auto& [name, node, reason] : refused) {
    const std::string dir = cases_dir() + "/refused/" + name + "/";
    ASSERT_TRUE(fs::exists(dir + "tflite_error.txt")) << name;  // what TFLite said
    Interp in(e.env, dir + "model.tflite");
    std::string error = in.p ? "" : baton_last_error();
    if (in.p) {
      ASSERT_NO_FATAL_FAILURE(set_inputs(in.p, dir));
      EXPECT_EQ(baton_interpreter_invoke(in.p), BATON_ERROR) << name;
      error = in.error();
    }
    EXPECT_NE(error.find(node), std::string::npos) << name << ": " << error;
    EXPECT_NE(error.find(reason), std::string::npos) << name << ": " << error;
  }
}

TEST(StringTensors, AnIsolatedOpPackRefusesStringOutputsWithTheReason) {
  const std::string dir = cases_dir() + "/skip_gram_2_skip1/";
  Env e(/*isolate=*/true);
  ASSERT_NE(e.env, nullptr) << baton_last_error();
  Interp in(e.env, dir + "model.tflite");
  ASSERT_NE(in.p, nullptr) << baton_last_error();
  ASSERT_NO_FATAL_FAILURE(set_inputs(in.p, dir));
  EXPECT_EQ(baton_interpreter_invoke(in.p), BATON_ERROR);
  EXPECT_NE(in.error().find("string tensors are not supported for a plugin in a process of its own"), std::string::npos)
      << in.error();
}

// A .npy file with `descr` and `shape` text around `data`, written by hand (as NumPy lays it out).
void write_raw_npy(const std::string& path, const std::string& descr, const std::string& shape,
                   const std::vector<uint8_t>& data) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  const char len[2] = {static_cast<char>(header.size() & 0xff), static_cast<char>(header.size() >> 8)};
  f.write(len, 2);
  f << header;
  f.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
}

std::string run_command(const std::string& args, int* code) {
  const std::string cmd = "XDG_STATE_HOME=" + test_state_dir() + " " + std::string(BATON_EXE) + " " + args + " 2>&1";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  *code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// `baton run` takes a STRING input from a .npy of bytes ('|S', NUL-padded as NumPy writes it) or of text
// ('<U', UTF-32 in the file, UTF-8 in the tensor), and writes a STRING output as bytes ('|S' as wide as
// the longest string): the hash-table cases through the command line, against TFLite's outputs.
TEST(StringTensors, TheCommandLineReadsAndWritesStringNpy) {
  TempDir work;
  const std::string common = std::string(" --no-delegates --plugin-dir ") + BUILTIN_PACK_DIR + " --config " +
                             work.file("empty.conf") + " --output-dir " + work.path();
  work.write("empty.conf", "# nothing\n");
  const std::string find = cases_dir() + "/hashtable_str_to_int64/";
  const std::vector<std::string> keys = {"alpha", "", "zeta", "\xc3\xbcn\xc3\xaf" "c\xc3\xb6" "d\xc3\xa9", "beta gamma", "beta"};
  ASSERT_EQ(packed(keys), read_bytes(find + "in_0.str"));  // the case's input, as this test spells it
  // Bytes: 11 wide (the longest key, in UTF-8), NUL-padded.
  std::vector<uint8_t> fixed(6 * 11, 0);
  for (size_t i = 0; i < keys.size(); ++i) std::copy(keys[i].begin(), keys[i].end(), fixed.begin() + 11 * i);
  write_raw_npy(work.file("keys_s.npy"), "|S11", "(2, 3)", fixed);
  // Text: "ünïcödé" is 7 characters; UTF-32 little-endian, 10 wide.
  const std::vector<std::u32string> text = {U"alpha", U"", U"zeta", U"\u00fcn\u00efc\u00f6d\u00e9", U"beta gamma", U"beta"};
  std::vector<uint8_t> utf32(6 * 10 * 4, 0);
  for (size_t i = 0; i < text.size(); ++i) std::memcpy(utf32.data() + 40 * i, text[i].data(), 4 * text[i].size());
  write_raw_npy(work.file("keys_u.npy"), "<U10", "(2, 3)", utf32);
  for (const std::string input : {"keys_s.npy", "keys_u.npy"}) {
    int code = -1;
    const std::string out = run_command("run " + find + "model.tflite --input " + work.file(input) + common, &code);
    ASSERT_EQ(code, 0) << out;
    for (int o = 0; o < 3; ++o) {
      auto got = tool::read_npy(work.file("out_" + std::to_string(o) + ".npy"));
      auto want = tool::read_npy(find + "out_" + std::to_string(o) + ".npy");
      ASSERT_TRUE(got && want);
      EXPECT_EQ(got->data, want->data) << input << " output " << o;
      EXPECT_EQ(got->shape, want->shape) << input << " output " << o;
    }
  }
  // A STRING output: bytes as wide as "minus three", and read back the packed buffer TFLite wrote.
  const std::string lookup = cases_dir() + "/hashtable_int64_to_str_call_once/";
  int code = -1;
  std::string out = run_command("run " + lookup + "model.tflite --input " + lookup + "in_0.npy" + common, &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("output 0: t3 STRING [5]  \"seven\", \"minus three\", \"big\", \"<unk>\", ..."), std::string::npos) << out;
  const std::vector<uint8_t> file = read_bytes(work.file("out_0.npy"));
  EXPECT_NE(std::string(file.begin(), file.end()).find("'descr': '|S11'"), std::string::npos);
  auto strings_out = tool::read_npy(work.file("out_0.npy"));
  ASSERT_TRUE(strings_out) << strings_out.error();
  EXPECT_EQ(strings_out->type, BATON_TYPE_STRING);
  EXPECT_EQ(strings_out->data, read_bytes(lookup + "out_0.str"));
  // No value: a STRING input is never generated; an object array (pickled) is refused, saying what to use.
  out = run_command("run " + find + "model.tflite" + common, &code);
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("cannot generate STRING values; give --input (a .npy of bytes, '|S', or of text, '<U')"),
            std::string::npos) << out;
  write_raw_npy(work.file("keys_o.npy"), "|O", "(2, 3)", std::vector<uint8_t>(48, 0));
  out = run_command("run " + find + "model.tflite --input " + work.file("keys_o.npy") + common, &code);
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("an object array (pickled) is not supported; save strings as bytes ('|S') or str ('<U') arrays"),
            std::string::npos) << out;
}

}  // namespace
}  // namespace baton::test
