// `baton run --image`: a photograph turned into a model's float32 NHWC input. The steps match
// tools/image-to-npy.mjs, which made the committed reference inputs: decode (stb_image) to 8-bit RGB,
// resize to the input's height and width with bilinear interpolation and half-pixel centres (stretched,
// no crop), then scale 0..255 to LO..HI (default -1..1).
#pragma once

#include <string>
#include <vector>

#include "npy.h"
#include "status.h"

namespace baton::tool {

struct ImageOptions {
  float lo = -1.0f;
  float hi = 1.0f;
};

// Parses "LO:HI" (e.g. "-1:1", "0:1").
Expected<ImageOptions> parse_image_range(const std::string& text);

// Makes an array of `shape` ([1, H, W, 3], float32) from the image file.
Expected<NpyArray> image_to_input(const std::string& path, const std::vector<int32_t>& shape, const ImageOptions& o);

}  // namespace baton::tool
