#include "image_input.h"

#include <stb_image.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

namespace baton::tool {

Expected<ImageOptions> parse_image_range(const std::string& text) {
  ImageOptions o;
  const size_t colon = text.find(':', 1);
  char* end = nullptr;
  if (colon != std::string::npos) {
    const std::string a = text.substr(0, colon), b = text.substr(colon + 1);
    o.lo = std::strtof(a.c_str(), &end);
    bool ok = !a.empty() && *end == '\0';
    o.hi = std::strtof(b.c_str(), &end);
    ok = ok && !b.empty() && *end == '\0';
    if (ok && o.lo != o.hi) return o;
  }
  return Status::error("--image-range '" + text + "': expected LO:HI, e.g. -1:1 or 0:1");
}

Expected<NpyArray> image_to_input(const std::string& path, const std::vector<int32_t>& shape, baton_tensor_type type,
                                  const ImageOptions& o) {
  if (type != BATON_TYPE_FLOAT32 && type != BATON_TYPE_UINT8 && type != BATON_TYPE_INT8) {
    return Status::error(std::string("--image needs a FLOAT32, UINT8 or INT8 input; this one is ") +
                         baton_tensor_type_name(type));
  }
  if (shape.size() != 4 || shape[0] != 1 || shape[3] != 3) {
    std::string s;
    for (int32_t d : shape) {
      if (!s.empty()) s += ',';
      s += std::to_string(d);
    }
    return Status::error("--image needs a model input of shape [1,H,W,3]; this one is [" + s + "]");
  }
  int w = 0, h = 0, channels = 0;
  std::unique_ptr<stbi_uc, void (*)(void*)> pixels(stbi_load(path.c_str(), &w, &h, &channels, 3), stbi_image_free);
  if (!pixels) return Status::error(path + ": cannot read the image: " + stbi_failure_reason());
  const int out_h = shape[1], out_w = shape[2];
  NpyArray arr;
  arr.type = type;
  arr.shape = shape;
  const size_t count = static_cast<size_t>(out_h) * out_w * 3;
  arr.data.resize(count * (type == BATON_TYPE_FLOAT32 ? sizeof(float) : 1));
  float* out = reinterpret_cast<float*>(arr.data.data());
  uint8_t* codes = arr.data.data();
  const stbi_uc* p = pixels.get();
  auto at = [&](int y, int x, int c) { return static_cast<double>(p[(static_cast<size_t>(y) * w + x) * 3 + c]); };
  for (int y = 0; y < out_h; ++y) {
    const double sy = (y + 0.5) * h / out_h - 0.5;
    const int y0 = static_cast<int>(std::floor(sy));
    const double fy = sy - y0;
    const int ya = std::clamp(y0, 0, h - 1), yb = std::clamp(y0 + 1, 0, h - 1);
    for (int x = 0; x < out_w; ++x) {
      const double sx = (x + 0.5) * w / out_w - 0.5;
      const int x0 = static_cast<int>(std::floor(sx));
      const double fx = sx - x0;
      const int xa = std::clamp(x0, 0, w - 1), xb = std::clamp(x0 + 1, 0, w - 1);
      for (int c = 0; c < 3; ++c) {
        const double v = (1 - fy) * ((1 - fx) * at(ya, xa, c) + fx * at(ya, xb, c)) +
                         fy * ((1 - fx) * at(yb, xa, c) + fx * at(yb, xb, c));
        const size_t i = (static_cast<size_t>(y) * out_w + x) * 3 + c;
        if (type == BATON_TYPE_FLOAT32) {
          out[i] = static_cast<float>(o.lo + v * (o.hi - o.lo) / 255.0);
        } else {
          // Pixel codes, rounded half up (v is within [0, 255]); int8 codes are shifted down by 128.
          const int code = static_cast<int>(std::floor(v + 0.5));
          codes[i] = static_cast<uint8_t>(type == BATON_TYPE_UINT8 ? code : code - 128);
        }
      }
    }
  }
  return arr;
}

}  // namespace baton::tool
