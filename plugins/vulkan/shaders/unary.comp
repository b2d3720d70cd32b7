// RELU, RELU_N1_TO_1, RELU6, TANH, LOGISTIC, HARD_SWISH, EXP, RSQRT, SQRT, ABS, NEG, SQUARE and GELU, one
// vec4 per invocation. Bindings: 0 output, 1 input. P.p[0] = (vec4s, c4, channels, -).
// Defines: OP (1 RELU, 2 RELU_N1_TO_1, 3 RELU6, 4 TANH, 5 LOGISTIC, 6 HARD_SWISH, 7 EXP, 8 RSQRT, 9 SQRT,
// 10 ABS, 11 NEG, 12 SQUARE, 13 GELU, 14 GELU's tanh approximation), MASK (LOGISTIC, EXP or RSQRT with
// channels not a multiple of 4: they map the zero lanes to 0.5, 1 or inf, which are zeroed again).
layout(std430, binding = 0) writeonly buffer Output { T4 dst[]; };
layout(std430, binding = 1) readonly buffer Input { T4 src[]; };

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
#elif OP == 7
  return exp(x);
#elif OP == 8
  return inversesqrt(x);
#elif OP == 9
  return sqrt(x);
#elif OP == 10
  return abs(x);
#elif OP == 11
  return -x;
#elif OP == 12
  return x * x;
#elif OP == 13
  // x (1 + erf(x / sqrt 2)) / 2; GLSL has no erf: erfc(z) for z >= 0 as Abramowitz and Stegun's 7.1.26
  // gives it (absolute error at most 1.5e-7), which for x < 0 is 1 + erf itself.
  vec4 z = abs(x) * 0.70710678;
  vec4 t = 1.0 / (1.0 + 0.3275911 * z);
  vec4 erfc = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))) *
              exp(-z * z);
  return 0.5 * x * mix(2.0 - erfc, erfc, lessThan(x, vec4(0.0)));
#elif OP == 14
  // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), the tanh as TANH above.
  vec4 u = 0.79788456 * (x + 0.044715 * x * x * x);
  vec4 e = exp(-2.0 * abs(u));
  return 0.5 * x * (1.0 + sign(u) * (1.0 - e) / (1.0 + e));
#else
  // TFLite's order: x * relu6(x + 3), then / 6.
  return x * clamp(x + 3.0, vec4(0.0), vec4(6.0)) / 6.0;
#endif
}

void main() {
  int i = flat_id();
  if (i >= P.p[0].x) return;
#if MASK
  dst[i] = T4(mask_lanes(apply(vec4(src[i])), i % P.p[0].y, P.p[0].z));
#else
  dst[i] = T4(apply(vec4(src[i])));
#endif
}
