// The model repository: the layout of Triton and OpenVINO Model Server, DIR/<model>/<version>/model.tflite
// (versions are positive integers; the highest is served when a request names none), with an optional
// DIR/<model>/config.ini of per-model settings:
//
//   # comments start with # or ;
//   instances = 2       interpreters running this model's requests at once (default: usable CPUs / threads)
//   threads = 1         threads of each interpreter (default: the server's --threads)
//   queue = 64          requests waiting for an interpreter before more are refused (503 / UNAVAILABLE)
//   deadline-ms = 30000 a request not done by then fails (504 / DEADLINE_EXCEEDED); 0: none
//   max-batch = 8       dynamic batching: queued requests run together, up to this many rows (their
//                       first dimension) in one run; the model's inputs and outputs must have a dynamic
//                       first dimension (default 1: none)
//   batch-delay-us = 500 how long a run waits for more rows after its first request arrived (default 0:
//                       only what is queued already)
//
// A key it does not know, or a bad value, is an error naming the file, the line and the key.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace baton::serve {

// Settings of one model; unset fields (0 / -1) take the server's defaults.
struct ModelSettings {
  int instances = 0;
  int threads = 0;
  int queue = 0;
  int64_t deadline_ms = -1;
  int max_batch = 0;            // 0: no batching
  int64_t batch_delay_us = -1;  // -1: 0 (what is queued already)
  // `delegates = a, b` (or `none`: op packs only) replaces the server's delegate chain for this model;
  // `isolate = p, q` (or `all`) runs those plugins in a process of their own for it.
  bool has_delegates = false;
  std::vector<std::string> delegates;  // empty with has_delegates: none
  std::vector<std::string> isolate;

  bool operator==(const ModelSettings&) const = default;
};

struct ModelVersionFiles {
  int64_t version = 0;
  std::filesystem::path path;  // .../<version>/model.tflite
};

struct RepositoryModel {
  std::string name;
  std::vector<ModelVersionFiles> versions;  // ascending
  ModelSettings settings;
};

// Reads the repository; fills `error` (naming the folder or file, line and key) and returns {} on failure.
// A model folder without any version holding model.tflite is an error, so a typo shows at start.
std::vector<RepositoryModel> scan_repository(const std::filesystem::path& dir, std::string* error);

// Reads one config.ini into `settings`; false with `error` set on a bad line.
bool read_model_settings(const std::filesystem::path& file, ModelSettings* settings, std::string* error);

}  // namespace baton::serve
