#include "model_repository.h"

#include <algorithm>
#include <charconv>
#include <fstream>

namespace baton::serve {

namespace fs = std::filesystem;

namespace {

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

bool parse_int(const std::string& text, int64_t min, int64_t max, int64_t* out) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < min || v > max) return false;
  *out = v;
  return true;
}

// A version folder's name: a positive decimal integer without sign or leading zeros.
bool parse_version(const std::string& name, int64_t* out) {
  if (name.empty() || name[0] == '0') return false;
  return parse_int(name, 1, INT64_MAX, out);
}

}  // namespace

bool read_model_settings(const fs::path& file, ModelSettings* settings, std::string* error) {
  std::ifstream in(file);
  if (!in) {
    *error = file.string() + ": cannot be read";
    return false;
  }
  struct Key {
    const char* name;
    int64_t min, max;
    const char* what;
  };
  static const Key kKeys[] = {
      {"instances", 1, 1024, "an integer from 1 to 1024"},
      {"threads", 1, 1024, "an integer from 1 to 1024"},
      {"queue", 1, 1 << 20, "an integer from 1 to 1048576"},
      {"deadline-ms", 0, INT32_MAX, "a whole number of milliseconds, 0 for none"},
      {"max-batch", 1, 1 << 16, "an integer from 1 to 65536"},
      {"batch-delay-us", 0, 10000000, "a whole number of microseconds from 0 to 10000000"},
  };
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::string where = file.string() + ":" + std::to_string(number);
    const std::string text = trim(line);
    if (text.empty() || text[0] == '#' || text[0] == ';') continue;
    const size_t eq = text.find('=');
    if (eq == std::string::npos) {
      *error = where + ": expected 'key = value', got '" + text + "'";
      return false;
    }
    const std::string key = trim(text.substr(0, eq)), value = trim(text.substr(eq + 1));
    if (key == "delegates" || key == "isolate") {
      std::vector<std::string> names;
      size_t start = 0;
      while (start <= value.size()) {
        const size_t comma = value.find(',', start);
        const std::string name = trim(value.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (name.empty()) {
          *error = where + ": key '" + key + "' must be plugin names separated by commas, got '" + value + "'";
          return false;
        }
        names.push_back(name);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
      if (key == "delegates") {
        settings->has_delegates = true;
        if (!(names.size() == 1 && names[0] == "none")) settings->delegates = names;
      } else {
        settings->isolate = names;
      }
      continue;
    }
    const Key* known = nullptr;
    for (const Key& k : kKeys) {
      if (key == k.name) known = &k;
    }
    if (!known) {
      *error = where + ": unknown key '" + key + "' (known: instances, threads, queue, deadline-ms, max-batch, batch-delay-us, delegates, isolate)";
      return false;
    }
    int64_t v = 0;
    if (!parse_int(value, known->min, known->max, &v)) {
      *error = where + ": key '" + key + "' must be " + known->what + ", got '" + value + "'";
      return false;
    }
    if (key == "instances") settings->instances = static_cast<int>(v);
    if (key == "threads") settings->threads = static_cast<int>(v);
    if (key == "queue") settings->queue = static_cast<int>(v);
    if (key == "deadline-ms") settings->deadline_ms = v;
    if (key == "max-batch") settings->max_batch = static_cast<int>(v);
    if (key == "batch-delay-us") settings->batch_delay_us = v;
  }
  return true;
}

std::vector<RepositoryModel> scan_repository(const fs::path& dir, std::string* error) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    *error = "model repository " + dir.string() + " is not a folder";
    return {};
  }
  std::vector<RepositoryModel> models;
  for (const fs::directory_entry& m : fs::directory_iterator(dir, ec)) {
    const std::string name = m.path().filename().string();
    if (name.empty() || name[0] == '.' || !m.is_directory()) continue;
    RepositoryModel model;
    model.name = name;
    for (const fs::directory_entry& v : fs::directory_iterator(m.path(), ec)) {
      int64_t version = 0;
      if (!v.is_directory() || !parse_version(v.path().filename().string(), &version)) continue;
      const fs::path file = v.path() / "model.tflite";
      if (fs::is_regular_file(file, ec)) model.versions.push_back({version, file});
    }
    if (model.versions.empty()) {
      *error = "model repository: " + m.path().string() + " has no version folder with a model.tflite (" +
               m.path().string() + "/1/model.tflite, ...)";
      return {};
    }
    std::sort(model.versions.begin(), model.versions.end(),
              [](const ModelVersionFiles& a, const ModelVersionFiles& b) { return a.version < b.version; });
    const fs::path config = m.path() / "config.ini";
    if (fs::exists(config, ec) && !read_model_settings(config, &model.settings, error)) return {};
    models.push_back(std::move(model));
  }
  if (ec) {
    *error = "model repository " + dir.string() + ": " + ec.message();
    return {};
  }
  if (models.empty()) {
    *error = "model repository " + dir.string() + " holds no model (expected " + dir.string() +
             "/<model>/<version>/model.tflite)";
    return {};
  }
  std::sort(models.begin(), models.end(),
            [](const RepositoryModel& a, const RepositoryModel& b) { return a.name < b.name; });
  return models;
}

}  // namespace baton::serve
