// A small streaming JSON writer (baton's --json outputs and the plan report): keys in the order written, stable.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace baton {

class JsonWriter {
 public:
  JsonWriter& begin_object() { value_prefix(); out_ += '{'; first_.push_back(true); return *this; }
  JsonWriter& end_object() { out_ += '}'; first_.pop_back(); return *this; }
  JsonWriter& begin_array() { value_prefix(); out_ += '['; first_.push_back(true); return *this; }
  JsonWriter& end_array() { out_ += ']'; first_.pop_back(); return *this; }
  JsonWriter& key(const std::string& k) {
    comma();
    string_literal(k);
    out_ += ':';
    after_key_ = true;
    return *this;
  }
  JsonWriter& value(const std::string& s) { value_prefix(); string_literal(s); return *this; }
  JsonWriter& value(const char* s) { return value(std::string(s ? s : "")); }
  JsonWriter& value(bool b) { value_prefix(); out_ += b ? "true" : "false"; return *this; }
  JsonWriter& value(int64_t v) { value_prefix(); out_ += std::to_string(v); return *this; }
  JsonWriter& value(int v) { return value(static_cast<int64_t>(v)); }
  JsonWriter& value(uint64_t v) { value_prefix(); out_ += std::to_string(v); return *this; }
  JsonWriter& value(unsigned v) { return value(static_cast<uint64_t>(v)); }
  JsonWriter& value(double v) {
    value_prefix();
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    out_ += buf;
    return *this;
  }
  JsonWriter& null() { value_prefix(); out_ += "null"; return *this; }
  template <typename T>
  JsonWriter& field(const std::string& k, const T& v) { key(k); return value(v); }
  template <typename T>
  JsonWriter& array_of(const std::string& k, const std::vector<T>& values) {
    key(k);
    begin_array();
    for (const T& v : values) value(v);
    return end_array();
  }
  const std::string& str() const { return out_; }

 private:
  void comma() {
    if (!first_.empty()) {
      if (!first_.back()) out_ += ',';
      first_.back() = false;
    }
  }
  void value_prefix() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    comma();
  }
  void string_literal(const std::string& s) {
    out_ += '"';
    for (unsigned char c : s) {
      switch (c) {
        case '"': out_ += "\\\""; break;
        case '\\': out_ += "\\\\"; break;
        case '\n': out_ += "\\n"; break;
        case '\t': out_ += "\\t"; break;
        case '\r': out_ += "\\r"; break;
        default:
          if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out_ += buf;
          } else {
            out_ += static_cast<char>(c);
          }
      }
    }
    out_ += '"';
  }
  std::string out_;
  std::vector<bool> first_;
  bool after_key_ = false;
};

}  // namespace baton
