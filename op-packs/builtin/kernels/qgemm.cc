#include "kernels/qgemm.h"

#include <algorithm>
#include <cstring>

#include "kernels/quant_math.h"
#include "kernels/requant_simd.h"

namespace baton::builtin {
namespace {

static_assert(kQGemmMC % kQGemmMR == 0);
constexpr int kPanelA = kQGemmMR * 4;  // bytes of one k-group of an A panel
constexpr int kPanelB = kQGemmNR * 4;  // bytes of one k-group of a B panel

int32_t wrap_add(int32_t a, int32_t b) { return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b)); }
int32_t wrap_mul(int32_t a, int32_t b) { return static_cast<int32_t>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b)); }

// ---- packing A ----------------------------------------------------------------------------------------

// Groups [q0, k4) of the rows `src` (kQGemmMR rows) into one panel, byte by byte; the k padding is zero.
// Adds each row's bytes (uint8 domain) to row_sum.
void pack_panel_scalar(const uint8_t* const* src, int q0, int k, int k4, uint32_t flip, uint8_t* dst,
                       uint32_t* row_sum) {
  const int full = k / 4;
  for (int r = 0; r < kQGemmMR; ++r) {
    uint32_t sum = 0;
    for (int q = q0; q < full; ++q) {
      uint32_t v;
      std::memcpy(&v, src[r] + 4 * q, 4);
      v ^= flip;
      std::memcpy(dst + static_cast<size_t>(q) * kPanelA + r * 4, &v, 4);
      // The four bytes' sum, without unpacking them one by one.
      const uint32_t pairs = (v & 0x00ff00ffu) + ((v >> 8) & 0x00ff00ffu);
      sum += (pairs & 0xffffu) + (pairs >> 16);
    }
    if (full < k4 && q0 <= full) {
      uint8_t tail[4] = {0, 0, 0, 0};
      for (int t = 0; t < k - 4 * full; ++t) {
        tail[t] = static_cast<uint8_t>(src[r][4 * full + t] ^ static_cast<uint8_t>(flip));
        sum += tail[t];
      }
      std::memcpy(dst + static_cast<size_t>(full) * kPanelA + r * 4, tail, 4);
    }
    row_sum[r] += sum;
  }
}

#ifdef BATON_QUANT_X86
// Eight groups at a time: eight rows of 32 bytes are an 8 x 8 matrix of 4-byte groups, and the panel
// wants it transposed (group q of rows 0..7 side by side). Row sums by vpsadbw. Returns the groups done.
BATON_TARGET_AVX2 int pack_panel_avx2(const uint8_t* const* src, int k, uint32_t flip, uint8_t* dst,
                                      uint32_t* row_sum) {
  static_assert(kQGemmMR == 8, "the transpose is 8 x 8");
  const int chunks = k / 32;
  const __m256i f = _mm256_set1_epi32(static_cast<int32_t>(flip)), zero = _mm256_setzero_si256();
  __m256i sums[kQGemmMR];
  for (auto& v : sums) v = zero;
  for (int c = 0; c < chunks; ++c) {
    __m256i v[kQGemmMR];
    for (int r = 0; r < kQGemmMR; ++r) {
      v[r] = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src[r] + 32 * c)), f);
      sums[r] = _mm256_add_epi64(sums[r], _mm256_sad_epu8(v[r], zero));
    }
    const __m256i t0 = _mm256_unpacklo_epi32(v[0], v[1]), t1 = _mm256_unpackhi_epi32(v[0], v[1]);
    const __m256i t2 = _mm256_unpacklo_epi32(v[2], v[3]), t3 = _mm256_unpackhi_epi32(v[2], v[3]);
    const __m256i t4 = _mm256_unpacklo_epi32(v[4], v[5]), t5 = _mm256_unpackhi_epi32(v[4], v[5]);
    const __m256i t6 = _mm256_unpacklo_epi32(v[6], v[7]), t7 = _mm256_unpackhi_epi32(v[6], v[7]);
    const __m256i u0 = _mm256_unpacklo_epi64(t0, t2), u1 = _mm256_unpackhi_epi64(t0, t2);
    const __m256i u2 = _mm256_unpacklo_epi64(t1, t3), u3 = _mm256_unpackhi_epi64(t1, t3);
    const __m256i u4 = _mm256_unpacklo_epi64(t4, t6), u5 = _mm256_unpackhi_epi64(t4, t6);
    const __m256i u6 = _mm256_unpacklo_epi64(t5, t7), u7 = _mm256_unpackhi_epi64(t5, t7);
    // u0 holds group 0 of rows 0-3 | group 4 of rows 0-3 ... halves from the two 128-bit lanes.
    const __m256i out[8] = {_mm256_permute2x128_si256(u0, u4, 0x20), _mm256_permute2x128_si256(u1, u5, 0x20),
                            _mm256_permute2x128_si256(u2, u6, 0x20), _mm256_permute2x128_si256(u3, u7, 0x20),
                            _mm256_permute2x128_si256(u0, u4, 0x31), _mm256_permute2x128_si256(u1, u5, 0x31),
                            _mm256_permute2x128_si256(u2, u6, 0x31), _mm256_permute2x128_si256(u3, u7, 0x31)};
    for (int g = 0; g < 8; ++g) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + static_cast<size_t>(8 * c + g) * kPanelA), out[g]);
    }
  }
  for (int r = 0; r < kQGemmMR; ++r) {
    const __m128i s = _mm_add_epi64(_mm256_castsi256_si128(sums[r]), _mm256_extracti128_si256(sums[r], 1));
    row_sum[r] += static_cast<uint32_t>(_mm_cvtsi128_si64(s) + _mm_extract_epi64(s, 1));
  }
  return 8 * chunks;
}
#endif

// Rows [m0, m0 + mc) into panels of kQGemmMR rows: panel p, group q, row r, byte t at
// p * k4 * kPanelA + q * kPanelA + r * 4 + t. Missing rows and the k padding are zero. row_sum[r] is the
// sum of row r's bytes (uint8 domain). `row_scratch` has room for kQGemmMR rows of k + 4 bytes.
void pack_a_block(QuantIsa isa, const QGemmRows& a, int m0, int mc, int k, int k4, uint8_t* packed,
                  int32_t* row_sum, uint8_t* row_scratch) {
  const int panels = (mc + kQGemmMR - 1) / kQGemmMR;
  const uint32_t flip = a.a_signed ? 0x80808080u : 0u;
  const size_t scratch_row = static_cast<size_t>(k) + 4;
  for (int p = 0; p < panels; ++p) {
    uint8_t* dst = packed + static_cast<size_t>(p) * k4 * kPanelA;
    const int rows = std::min(kQGemmMR, mc - p * kQGemmMR);
    const uint8_t* src[kQGemmMR];
    for (int r = 0; r < rows; ++r) src[r] = a.row(a.context, m0 + p * kQGemmMR + r, row_scratch + r * scratch_row);
    uint32_t sums[kQGemmMR] = {};
    if (rows < kQGemmMR) {
      // The block's last, partial panel: the missing rows must pack as zeros, so their bytes are the flip
      // pattern, which packing turns into zero.
      std::memset(row_scratch + rows * scratch_row, static_cast<uint8_t>(flip), (kQGemmMR - rows) * scratch_row);
      for (int r = rows; r < kQGemmMR; ++r) src[r] = row_scratch + r * scratch_row;
    }
    int q0 = 0;
#ifdef BATON_QUANT_X86
    if (isa != QuantIsa::kScalar) q0 = pack_panel_avx2(src, k, flip, dst, sums);
#endif
    (void)isa;
    pack_panel_scalar(src, q0, k, k4, flip, dst, sums);
    for (int r = 0; r < kQGemmMR; ++r) row_sum[p * kQGemmMR + r] = static_cast<int32_t>(sums[r]);
  }
}

// ---- micro-kernels: tile[r][j] = sum over the k groups of A panel row r times B panel column j -------

void kernel_scalar(const uint8_t* a, const int8_t* b, int k4, int32_t* tile) {
  int32_t acc[kQGemmMR][kQGemmNR] = {};
  for (int q = 0; q < k4; ++q) {
    const uint8_t* ag = a + static_cast<size_t>(q) * kPanelA;
    const int8_t* bg = b + static_cast<size_t>(q) * kPanelB;
    for (int r = 0; r < kQGemmMR; ++r) {
      for (int j = 0; j < kQGemmNR; ++j) {
        int32_t s = 0;
        for (int t = 0; t < 4; ++t) s += static_cast<int32_t>(ag[r * 4 + t]) * bg[j * 4 + t];
        acc[r][j] = wrap_add(acc[r][j], s);
      }
    }
  }
  std::memcpy(tile, acc, sizeof(acc));
}

#ifdef BATON_QUANT_X86

// Bytes widened to int16 and multiplied pairwise with vpmaddwd: a group of B (16 columns x 4 k) is four
// registers of 4 columns x 4 k; each product register holds per column two partial sums, added up
// horizontally once at the end. Two rows at a time keep 8 accumulators, 4 B and 1 A register live.
BATON_TARGET_AVX2 void kernel_avx2(const uint8_t* a, const int8_t* b, int k4, int32_t* tile) {
  for (int rp = 0; rp < kQGemmMR; rp += 2) {
    __m256i acc[2][4];
    for (auto& row : acc) {
      for (auto& v : row) v = _mm256_setzero_si256();
    }
    const uint8_t* ap = a + rp * 4;
    const int8_t* bp = b;
    for (int q = 0; q < k4; ++q) {
      __m256i bw[4];
      for (int c = 0; c < 4; ++c) bw[c] = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bp + 16 * c)));
      for (int r = 0; r < 2; ++r) {
        int32_t quad;
        std::memcpy(&quad, ap + r * 4, 4);
        const __m256i av = _mm256_broadcastq_epi64(_mm_cvtepu8_epi16(_mm_cvtsi32_si128(quad)));
        for (int c = 0; c < 4; ++c) acc[r][c] = _mm256_add_epi32(acc[r][c], _mm256_madd_epi16(av, bw[c]));
      }
      ap += kPanelA;
      bp += kPanelB;
    }
    for (int r = 0; r < 2; ++r) {
      // hadd gives columns [0 1 4 5 | 2 3 6 7]; the permute restores their order.
      const __m256i lo = _mm256_permute4x64_epi64(_mm256_hadd_epi32(acc[r][0], acc[r][1]), 0xD8);
      const __m256i hi = _mm256_permute4x64_epi64(_mm256_hadd_epi32(acc[r][2], acc[r][3]), 0xD8);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(tile + (rp + r) * kQGemmNR), lo);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(tile + (rp + r) * kQGemmNR + 8), hi);
    }
  }
}

// vpdpbusd: each int32 lane adds four unsigned-by-signed byte products, exactly.
BATON_TARGET_VNNI void kernel_vnni(const uint8_t* a, const int8_t* b, int k4, int32_t* tile) {
  __m512i acc[kQGemmMR];
#pragma GCC unroll 8
  for (int r = 0; r < kQGemmMR; ++r) acc[r] = _mm512_setzero_si512();
  for (int q = 0; q < k4; ++q) {
    const __m512i bv = _mm512_loadu_si512(b + static_cast<size_t>(q) * kPanelB);
    const uint8_t* ag = a + static_cast<size_t>(q) * kPanelA;
#pragma GCC unroll 8
    for (int r = 0; r < kQGemmMR; ++r) {
      int32_t quad;
      std::memcpy(&quad, ag + r * 4, 4);
      acc[r] = _mm512_dpbusd_epi32(acc[r], _mm512_set1_epi32(quad), bv);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < kQGemmMR; ++r) _mm512_storeu_si512(tile + r * kQGemmNR, acc[r]);
}

// Two neighbouring B panels at once (an 8 x 32 tile in 16 accumulators): each broadcast of A's four bytes
// serves two vpdpbusd, and the two tiles come out as kernel_vnni gives them.
BATON_TARGET_VNNI void kernel_vnni_pair(const uint8_t* a, const int8_t* b0, const int8_t* b1, int k4, int32_t* tile0,
                                        int32_t* tile1) {
  __m512i acc0[kQGemmMR], acc1[kQGemmMR];
#pragma GCC unroll 8
  for (int r = 0; r < kQGemmMR; ++r) acc0[r] = acc1[r] = _mm512_setzero_si512();
  for (int q = 0; q < k4; ++q) {
    const __m512i bv0 = _mm512_loadu_si512(b0 + static_cast<size_t>(q) * kPanelB);
    const __m512i bv1 = _mm512_loadu_si512(b1 + static_cast<size_t>(q) * kPanelB);
    const uint8_t* ag = a + static_cast<size_t>(q) * kPanelA;
#pragma GCC unroll 8
    for (int r = 0; r < kQGemmMR; ++r) {
      int32_t quad;
      std::memcpy(&quad, ag + r * 4, 4);
      const __m512i av = _mm512_set1_epi32(quad);
      acc0[r] = _mm512_dpbusd_epi32(acc0[r], av, bv0);
      acc1[r] = _mm512_dpbusd_epi32(acc1[r], av, bv1);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < kQGemmMR; ++r) {
    _mm512_storeu_si512(tile0 + r * kQGemmNR, acc0[r]);
    _mm512_storeu_si512(tile1 + r * kQGemmNR, acc1[r]);
  }
}

#endif  // BATON_QUANT_X86

// ---- output stages -------------------------------------------------------------------------------------

struct TileSpot {
  int row0, rows;  // rows of the output this tile covers (rows <= kQGemmMR)
  int col0, cols;
  const int32_t* row_sum;  // row_sum[0] is the tile's first row
};

void requant_tile_scalar(const int32_t* tile, const TileSpot& t, const QGemmRequantOutput& o) {
  for (int i = 0; i < t.rows; ++i) {
    uint8_t* dst = o.out + static_cast<size_t>(t.row0 + i) * o.ldc + t.col0;
    const int32_t row_term = wrap_mul(t.row_sum[i], -o.b_zero);  // negated before the product: no -INT32_MIN
    for (int j = 0; j < t.cols; ++j) {
      const int c = t.col0 + j;
      const int32_t acc = wrap_add(wrap_add(tile[i * kQGemmNR + j], o.col_offset[c]), row_term);
      const Requantize rq{{o.multiplier[c], o.shift[c]}, o.zero_point, o.lo, o.hi, o.ties_upward};
      dst[j] = static_cast<uint8_t>(requantize(acc, rq));
    }
  }
}

#ifdef BATON_QUANT_X86

BATON_TARGET_AVX2 void requant_tile_avx2(const int32_t* tile, const TileSpot& t, const QGemmRequantOutput& o) {
  __m256i off[2], mult[2], shift[2];
  for (int h = 0; h < 2; ++h) {
    off[h] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(o.col_offset + t.col0 + 8 * h));
    mult[h] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(o.multiplier + t.col0 + 8 * h));
    shift[h] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(o.shift + t.col0 + 8 * h));
  }
  const __m256i zp = _mm256_set1_epi32(o.zero_point), lo = _mm256_set1_epi32(o.lo), hi = _mm256_set1_epi32(o.hi);
  const __m256i away = _mm256_set1_epi32(o.ties_upward ? 0 : -1);
  for (int i = 0; i < t.rows; ++i) {
    const __m256i row_term = _mm256_set1_epi32(wrap_mul(t.row_sum[i], o.b_zero));
    __m256i codes[2];
    for (int h = 0; h < 2; ++h) {
      __m256i acc = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tile + i * kQGemmNR + 8 * h));
      acc = _mm256_sub_epi32(_mm256_add_epi32(acc, off[h]), row_term);
      codes[h] = requant8(acc, mult[h], shift[h], zp, lo, hi, away);
    }
    const __m128i bytes = codes_to_bytes(codes[0], codes[1]);
    uint8_t* dst = o.out + static_cast<size_t>(t.row0 + i) * o.ldc + t.col0;
    if (t.cols == kQGemmNR) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), bytes);
    } else {
      alignas(16) uint8_t tmp[16];
      _mm_store_si128(reinterpret_cast<__m128i*>(tmp), bytes);
      std::memcpy(dst, tmp, t.cols);
    }
  }
}

BATON_TARGET_VNNI void requant_tile_vnni(const int32_t* tile, const TileSpot& t, const QGemmRequantOutput& o) {
  const __m512i off = _mm512_loadu_si512(o.col_offset + t.col0);
  const __m512i mult = _mm512_loadu_si512(o.multiplier + t.col0);
  const __m512i shift = _mm512_loadu_si512(o.shift + t.col0);
  const __m512i zp = _mm512_set1_epi32(o.zero_point), lo = _mm512_set1_epi32(o.lo), hi = _mm512_set1_epi32(o.hi);
  const __mmask16 keep = static_cast<__mmask16>((1u << t.cols) - 1u);
  const __mmask16 away = o.ties_upward ? 0 : 0xFFFF;
  for (int i = 0; i < t.rows; ++i) {
    __m512i acc = _mm512_loadu_si512(tile + i * kQGemmNR);
    acc = _mm512_sub_epi32(_mm512_add_epi32(acc, off), _mm512_set1_epi32(wrap_mul(t.row_sum[i], o.b_zero)));
    const __m128i bytes = _mm512_cvtepi32_epi8(requant16(acc, mult, shift, zp, lo, hi, away));  // low bytes
    _mm_mask_storeu_epi8(o.out + static_cast<size_t>(t.row0 + i) * o.ldc + t.col0, keep, bytes);
  }
}

#endif  // BATON_QUANT_X86

void float_tile(const int32_t* tile, const TileSpot& t, const QGemmFloatOutput& o) {
  for (int i = 0; i < t.rows; ++i) {
    const int row = t.row0 + i;
    float* dst = o.out + static_cast<size_t>(row) * o.ldc + t.col0;
    const int32_t zero = o.row_zero ? o.row_zero[row] : 0;
    const float row_scale = o.row_scale[row];
    for (int j = 0; j < t.cols; ++j) {
      const int c = t.col0 + j;
      const int32_t acc = wrap_add(tile[i * kQGemmNR + j], -wrap_mul(zero, o.col_sums[c]));
      float v = static_cast<float>(acc) * (row_scale * o.col_scale[c]);
      if (o.bias) v += o.bias[c];
      dst[j] = clamp_activation(v, o.range);
    }
  }
}

void int32_tile(const int32_t* tile, const TileSpot& t, const QGemmInt32Output& o) {
  for (int i = 0; i < t.rows; ++i) {
    int32_t* dst = o.out + static_cast<size_t>(t.row0 + i) * o.ldc + t.col0;
    const int32_t row_term = wrap_mul(t.row_sum[i], -o.b_zero);  // negated before the product: no -INT32_MIN
    for (int j = 0; j < t.cols; ++j) dst[j] = wrap_add(wrap_add(tile[i * kQGemmNR + j], o.col_offset[t.col0 + j]), row_term);
  }
}

void run_kernel(QuantIsa isa, const uint8_t* a, const int8_t* b, int k4, int32_t* tile) {
#ifdef BATON_QUANT_X86
  if (isa == QuantIsa::kAvx512Vnni) return kernel_vnni(a, b, k4, tile);
  if (isa == QuantIsa::kAvx2) return kernel_avx2(a, b, k4, tile);
#endif
  (void)isa;
  kernel_scalar(a, b, k4, tile);
}

void output_tile(QuantIsa isa, const int32_t* tile, const TileSpot& t, const QGemmRequantOutput& o) {
#ifdef BATON_QUANT_X86
  if (isa == QuantIsa::kAvx512Vnni) return requant_tile_vnni(tile, t, o);
  if (isa == QuantIsa::kAvx2) return requant_tile_avx2(tile, t, o);
#endif
  (void)isa;
  requant_tile_scalar(tile, t, o);
}

void output_tile(QuantIsa, const int32_t* tile, const TileSpot& t, const QGemmFloatOutput& o) { float_tile(tile, t, o); }
void output_tile(QuantIsa, const int32_t* tile, const TileSpot& t, const QGemmInt32Output& o) { int32_tile(tile, t, o); }

size_t align64(size_t n) { return (n + 63) & ~size_t{63}; }

template <typename Out>
void qgemm_impl(QuantIsa isa, QGemmRows a, int m, int n, int k, const int8_t* packed_b, const Out& out,
                uint8_t* scratch, Parallel* parallel) {
  if (m <= 0 || n <= 0) return;
  const int kp = qgemm_k_padded(k);
  const int k4 = kp / 4;
  const int panels = qgemm_n_padded(n) / kQGemmNR;
  const int m_blocks = (m + kQGemmMC - 1) / kQGemmMC;
  const int workers = worker_count(parallel);
  int n_chunks = 1;
  if (workers > 1 && m_blocks < 2 * workers) n_chunks = std::min(panels, (2 * workers + m_blocks - 1) / m_blocks);
  const size_t per_worker = qgemm_scratch_per_worker(k);
  parallel_run(parallel, m_blocks * n_chunks, [&](int task, int worker) {
    const int mb = task / n_chunks;
    const int chunk = task % n_chunks;
    const int m0 = mb * kQGemmMC;
    const int mc = std::min(kQGemmMC, m - m0);
    uint8_t* ws = scratch + static_cast<size_t>(worker) * per_worker;
    uint8_t* packed_a = ws;
    auto* row_sum = reinterpret_cast<int32_t*>(ws + align64(static_cast<size_t>(kQGemmMC) * kp));
    uint8_t* row_scratch = ws + align64(static_cast<size_t>(kQGemmMC) * kp) + align64(sizeof(int32_t) * kQGemmMC);
    pack_a_block(isa, a, m0, mc, k, k4, packed_a, row_sum, row_scratch);
    const int p0 = static_cast<int>(static_cast<int64_t>(panels) * chunk / n_chunks);
    const int p1 = static_cast<int>(static_cast<int64_t>(panels) * (chunk + 1) / n_chunks);
    alignas(64) int32_t tile[kQGemmMR * kQGemmNR];
    int p = p0;
#ifdef BATON_QUANT_X86
    if (isa == QuantIsa::kAvx512Vnni) {
      alignas(64) int32_t tile1[kQGemmMR * kQGemmNR];
      for (; p + 2 <= p1; p += 2) {
        const int8_t* b_panel = packed_b + static_cast<size_t>(p) * k4 * kPanelB;
        for (int r0 = 0; r0 < mc; r0 += kQGemmMR) {
          kernel_vnni_pair(packed_a + static_cast<size_t>(r0 / kQGemmMR) * k4 * kPanelA, b_panel,
                           b_panel + static_cast<size_t>(k4) * kPanelB, k4, tile, tile1);
          const int rows = std::min(kQGemmMR, mc - r0);
          output_tile(isa, tile, {m0 + r0, rows, p * kQGemmNR, std::min(kQGemmNR, n - p * kQGemmNR), row_sum + r0}, out);
          output_tile(isa, tile1, {m0 + r0, rows, (p + 1) * kQGemmNR, std::min(kQGemmNR, n - (p + 1) * kQGemmNR), row_sum + r0},
                      out);
        }
      }
    }
#endif
    for (; p < p1; ++p) {
      const int8_t* b_panel = packed_b + static_cast<size_t>(p) * k4 * kPanelB;
      for (int r0 = 0; r0 < mc; r0 += kQGemmMR) {
        run_kernel(isa, packed_a + static_cast<size_t>(r0 / kQGemmMR) * k4 * kPanelA, b_panel, k4, tile);
        const TileSpot spot{m0 + r0, std::min(kQGemmMR, mc - r0), p * kQGemmNR, std::min(kQGemmNR, n - p * kQGemmNR),
                            row_sum + r0};
        output_tile(isa, tile, spot, out);
      }
    }
  });
}

}  // namespace

QuantIsa best_quant_isa() {
#ifdef BATON_QUANT_X86
  static const QuantIsa isa = [] {
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni")) {
      return QuantIsa::kAvx512Vnni;
    }
    if (__builtin_cpu_supports("avx2")) return QuantIsa::kAvx2;
    return QuantIsa::kScalar;
  }();
  return isa;
#else
  return QuantIsa::kScalar;
#endif
}

const char* quant_isa_name(QuantIsa isa) {
  switch (isa) {
    case QuantIsa::kAvx512Vnni: return "avx512-vnni";
    case QuantIsa::kAvx2: return "avx2";
    case QuantIsa::kScalar: break;
  }
  return "scalar";
}

size_t qgemm_packed_b_size(int n, int k) {
  return static_cast<size_t>(qgemm_n_padded(n)) * static_cast<size_t>(qgemm_k_padded(k));
}

void qgemm_pack_b(const uint8_t* b, int ldb, int n, int k, bool b_unsigned, int8_t* packed, int32_t* col_sums) {
  const int k4 = qgemm_k_padded(k) / 4;
  const int n_padded = qgemm_n_padded(n);
  std::memset(packed, 0, qgemm_packed_b_size(n, k));
  for (int col = 0; col < n_padded; ++col) {
    int32_t sum = 0;
    if (col < n) {
      const uint8_t* src = b + static_cast<size_t>(col) * ldb;
      int8_t* panel = packed + static_cast<size_t>(col / kQGemmNR) * k4 * kPanelB + (col % kQGemmNR) * 4;
      for (int kk = 0; kk < k; ++kk) {
        const int8_t v = b_unsigned ? static_cast<int8_t>(static_cast<int32_t>(src[kk]) - 128)
                                    : static_cast<int8_t>(src[kk]);
        panel[static_cast<size_t>(kk / 4) * kPanelB + kk % 4] = v;
        sum += v;
      }
    }
    col_sums[col] = sum;
  }
}

void qgemm_column_offsets(int n, int k, const int32_t* bias, const int32_t* col_sums, int32_t a_zero,
                          int32_t b_zero, int32_t* col_offset) {
  const int n_padded = qgemm_n_padded(n);
  const int32_t k_term = wrap_mul(wrap_mul(k, a_zero), b_zero);
  for (int c = 0; c < n_padded; ++c) {
    col_offset[c] = c < n ? wrap_add(wrap_add(bias ? bias[c] : 0, -wrap_mul(a_zero, col_sums[c])), k_term) : 0;
  }
}

size_t qgemm_scratch_per_worker(int k) {
  const size_t kp = static_cast<size_t>(qgemm_k_padded(k));
  return align64(kQGemmMC * kp) + align64(sizeof(int32_t) * kQGemmMC) + align64(kQGemmMR * (static_cast<size_t>(k) + 4));
}

void qgemm(QuantIsa isa, QGemmRows a, int m, int n, int k, const int8_t* packed_b, const QGemmRequantOutput& out,
           uint8_t* scratch, Parallel* parallel) {
  qgemm_impl(isa, a, m, n, k, packed_b, out, scratch, parallel);
}

void qgemm(QuantIsa isa, QGemmRows a, int m, int n, int k, const int8_t* packed_b, const QGemmFloatOutput& out,
           uint8_t* scratch, Parallel* parallel) {
  qgemm_impl(isa, a, m, n, k, packed_b, out, scratch, parallel);
}

void qgemm(QuantIsa isa, QGemmRows a, int m, int n, int k, const int8_t* packed_b, const QGemmInt32Output& out,
           uint8_t* scratch, Parallel* parallel) {
  qgemm_impl(isa, a, m, n, k, packed_b, out, scratch, parallel);
}

void requantize_row(QuantIsa isa, const int32_t* acc, const int32_t* multiplier, const int32_t* shift,
                    int32_t zero_point, int32_t lo, int32_t hi, bool ties_upward, uint8_t* out, int count) {
  int i = 0;
#ifdef BATON_QUANT_X86
  if (isa != QuantIsa::kScalar) {
    // Whole tiles of 16 through the GEMM's output stage: a one-row tile with no offsets.
    alignas(64) static constexpr int32_t kZeros[kQGemmNR] = {};
    alignas(64) static constexpr int32_t kZeroSum[1] = {0};
    for (; i + kQGemmNR <= count; i += kQGemmNR) {
      QGemmRequantOutput o;
      o.col_offset = kZeros;
      o.multiplier = multiplier + i;
      o.shift = shift + i;
      o.zero_point = zero_point;
      o.lo = lo;
      o.hi = hi;
      o.ties_upward = ties_upward;
      o.out = out + i;
      o.ldc = 0;
      const TileSpot t{0, 1, 0, kQGemmNR, kZeroSum};
      if (isa == QuantIsa::kAvx512Vnni) requant_tile_vnni(acc + i, t, o);
      else requant_tile_avx2(acc + i, t, o);
    }
  }
#endif
  (void)isa;
  for (; i < count; ++i) {
    out[i] = static_cast<uint8_t>(requantize(acc[i], {{multiplier[i], shift[i]}, zero_point, lo, hi, ties_upward}));
  }
}

}  // namespace baton::builtin
