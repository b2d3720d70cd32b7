// Running a real model on its reference case (tests/data/reference/NAME: in_*.npy, out_*.npy) and
// comparing, shared by the delegate suites (cpu, xnnpack, vulkan, TFLite delegates) and the custom-op
// packs' real models; where the real models are, and a reference case's name as a test name.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <string>

#include "interpreter.h"
#include "npy.h"
#include "op_graph.h"

namespace baton::test {

// The folder tools/fetch-models.sh fills ($BATON_MODEL_CACHE); "" without one.
inline std::string model_cache() {
  const char* c = std::getenv("BATON_MODEL_CACHE");
  return c ? c : "";
}

// A parameter name as a test name (INSTANTIATE_TEST_SUITE_P's last argument): what is not a letter or a
// digit becomes '_'.
inline std::string param_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param;
  for (char& c : n) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return n;
}

// Nodes that run in partitions of `plugin`.
inline size_t delegated_nodes(const Interpreter& in, const std::string& plugin) {
  size_t n = 0;
  for (size_t i = 0; i < in.nodes().size(); ++i) {
    const Placement p = in.placement(i);
    n += p.kind == "delegate" && p.plugin == plugin;
  }
  return n;
}

// Feeds case `name`'s inputs and invokes, `runs` times. False (with the failure recorded) on any error.
inline bool run_reference_inputs(Interpreter& in, const std::string& name, int runs) {
  const std::string ref = std::string(BATON_SOURCE_ROOT) + "/tests/data/reference/" + name + "/";
  for (int run = 0; run < runs; ++run) {
    for (size_t i = 0; i < in.input_count(); ++i) {
      auto arr = tool::read_npy(ref + "in_" + std::to_string(i) + ".npy");
      EXPECT_TRUE(arr) << arr.error();
      EXPECT_TRUE(arr && arr->data.size() == in.input(i).bytes) << name << " input " << i;
      if (!arr || arr->data.size() != in.input(i).bytes) return false;
      std::memcpy(in.input(i).data, arr->data.data(), arr->data.size());
    }
    Status s = in.invoke();
    EXPECT_TRUE(s) << s.message();
    if (!s) return false;
  }
  return true;
}

// Compares every float output with case `name`'s reference: max |diff| / max |ref| must not exceed
// `bound` (a failure is recorded otherwise). Returns the worst ratio.
inline double compare_with_reference(const Interpreter& in, const std::string& name, double bound) {
  const std::string ref = std::string(BATON_SOURCE_ROOT) + "/tests/data/reference/" + name + "/";
  double worst = 0;
  for (size_t o = 0; o < in.output_count(); ++o) {
    auto arr = tool::read_npy(ref + "out_" + std::to_string(o) + ".npy");
    EXPECT_TRUE(arr) << arr.error();
    if (!arr) continue;
    EXPECT_EQ(arr->shape, in.output(o).shape) << "output " << o;
    if (arr->shape != in.output(o).shape) continue;
    const double rel = relative_error(reinterpret_cast<const float*>(in.output(o).data),
                                      reinterpret_cast<const float*>(arr->data.data()), arr->data.size() / 4);
    worst = std::max(worst, rel);
    EXPECT_LE(rel, bound) << name << " output " << o;
  }
  return worst;
}

}  // namespace baton::test
