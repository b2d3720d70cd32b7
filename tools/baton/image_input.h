// `baton run --image`: a photograph turned into a model's NHWC input. The steps match
// tools/image-to-npy.mjs, which made the committed reference inputs: decode (stb_image) to 8-bit RGB,
// resize to the input's height and width with bilinear interpolation and half-pixel centres (stretched,
// no crop), then for a float32 input scale 0..255 to LO..HI (default -1..1); a uint8 input (quantized
// models take pixel codes) gets the resized value rounded half up, 0..255, an int8 input that minus 128.
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

// Makes an array of `shape` ([1, H, W, 3]) and `type` (FLOAT32, UINT8 or INT8) from the image file.
Expected<NpyArray> image_to_input(const std::string& path, const std::vector<int32_t>& shape, baton_tensor_type type,
                                  const ImageOptions& o);

}  // namespace baton::tool
