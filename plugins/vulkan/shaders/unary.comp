// RELU, RELU_N1_TO_1, RELU6, TANH, LOGISTIC and HARD_SWISH, one vec4 per invocation.
// Bindings: 0 output, 1 input. P.p[0] = (vec4s, c4, channels, -).
// Defines: OP (1 RELU, 2 RELU_N1_TO_1, 3 RELU6, 4 TANH, 5 LOGISTIC, 6 HARD_SWISH), MASK (LOGISTIC with
// channels not a multiple of 4: it maps the zero lanes to 0.5, they are zeroed again).
layout(std430, binding = 0) writeonly buffer Output { vec4 dst[]; };
layout(std430, binding = 1) readonly buffer Input { vec4 src[]; };

vec4 apply(vec4 x) {
#if OP == 1
  return max(x, vec4(0.0));
#elif OP == 2
  return clamp(x, vec4(-1.0), vec4(1.0));
#elif OP == 3
  return clamp(x, vec4(0.0), vec4(6.0));
#elif OP == 4
  // From exp of a non-positive argument, so a large |x| cannot overflow to inf / inf.
  vec4 e = exp(-2.0 * abs(x));
  return sign(x) * (1.0 - e) / (1.0 + e);
#elif OP == 5
  return 1.0 / (1.0 + exp(-x));
#else
  // TFLite's order: x * relu6(x + 3), then / 6.
  return x * clamp(x + 3.0, vec4(0.0), vec4(6.0)) / 6.0;
#endif
}

void main() {
  int i = flat_id();
  if (i >= P.p[0].x) return;
#if MASK
  dst[i] = mask_lanes(apply(src[i]), i % P.p[0].y, P.p[0].z);
#else
  dst[i] = apply(src[i]);
#endif
}
