/*
 * baton plugin ABI, version 1.15. The table at the end of this header says what each minor version added.
 *
 * This is the only header a baton plugin needs. A plugin is a shared object that exports one symbol,
 * `baton_plugin_entry`. The host calls it once with its ABI version and a table of host functions; the
 * plugin answers with a descriptor that says who it is (name, version, kind), which ops and op versions
 * it handles, which options it accepts, and the function tables the host calls later. After that the
 * plugin reaches the host only through the table it was given: it links against no baton library, so a
 * plugin built once keeps loading into newer hosts of the same major version.
 *
 * Rules that hold for every declaration below:
 *  - Plain C11 across the boundary. No C++ types, no exceptions: each side catches its own.
 *  - Every struct that crosses the boundary starts with `struct_size`, the size of the struct as its
 *    writer was built (each struct says which side writes it). Fields are only ever appended, never
 *    moved. In an array of such structs (ops, options, devices) the reader steps by the first element's
 *    `struct_size`. Zero-initialised structs mean "nothing set".
 *  - Absent: a field that lies past the `struct_size` the reader was given is absent; the reader treats
 *    it as zero and tests for it with BATON_STRUCT_HAS (below). A function pointer that is NULL is absent
 *    too. "ABI 1.N" next to a declaration means it is absent from an older host (or plugin); a host fills
 *    every function of its own version, and a plugin that calls a later minor's function tests for it
 *    (BATON_STRUCT_HAS and not NULL) so that it still loads into an older host of the same major.
 *  - Enum values inside structs are int32_t fields naming their enum in a comment, since an enum's size
 *    is the compiler's choice; the two fields typed with their enum (baton_option_decl.type,
 *    baton_plugin_desc.kind) predate that rule, and a check below keeps those enums int32-sized.
 *  - Memory is freed on the side that allocated it. Strings the host passes in are borrowed for the
 *    duration of the call unless a comment says otherwise; strings in a plugin's descriptor are borrowed
 *    by the host for as long as the plugin is loaded.
 *  - Handles (`baton_node`, `baton_tensor`, ...) are opaque; read them only through the host table.
 *  - A failing call returns a status other than BATON_OK and writes a message with `error_set`; it never
 *    aborts the process.
 *
 * Threads: several interpreters may share one loaded plugin and run in different threads. The host
 * never makes two calls into a plugin at the same time unless the plugin sets
 * BATON_PLUGIN_FLAG_REENTRANT; with the flag, calls for different nodes or partitions may overlap, but
 * the calls for one node (init, prepare, invoke, free) or one partition never do. `create` and
 * `destroy` run once, alone.
 *
 * DENSIFY never reaches a plugin: the host expands sparse constants itself at load, and folds every node
 * whose inputs are all constant (running the op pack's kernel once), so plugins see plain constants.
 *
 * Versioning: the major version changes only when an existing field or function changes meaning; the
 * host refuses a plugin of another major. A minor version appends fields and functions and works both
 * ways: an older plugin in a newer host, a newer plugin in an older host.
 */
#ifndef BATON_PLUGIN_API_H
#define BATON_PLUGIN_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BATON_ABI_VERSION_MAJOR 1
#define BATON_ABI_VERSION_MINOR 16

/* Whether the struct at `ptr` (not NULL) holds `member`: its struct_size reaches past the member's last
 * byte. A member it does not hold is absent. `type` is the struct's type as this header declares it.
 * C and C++ alike, for instance on the host table a plugin was given:
 *   if (BATON_STRUCT_HAS(api, baton_host_api, shared_object) && api->shared_object != NULL) ...
 * For the members of baton_builtin_options.u, which all lie inside its struct_size, see that struct. */
#ifdef __cplusplus
#define BATON_STRUCT_HAS(ptr, type, member) ((ptr)->struct_size >= offsetof(type, member) + sizeof(type::member))
#else
#define BATON_STRUCT_HAS(ptr, type, member) \
  ((ptr)->struct_size >= offsetof(type, member) + sizeof(((type*)0)->member))
#endif

/* Name of the one symbol a plugin exports; its type is baton_plugin_entry_fn. */
#define BATON_PLUGIN_ENTRY_SYMBOL "baton_plugin_entry"

#if defined(_WIN32)
#define BATON_PLUGIN_EXPORT __declspec(dllexport)
#else
#define BATON_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* ---------------------------------------------------------------------------------------------------
 * Basic types
 * ------------------------------------------------------------------------------------------------- */

typedef enum baton_status {
  BATON_OK = 0,
  BATON_ERROR = 1,            /* generic failure; the message says what */
  BATON_UNSUPPORTED = 2,      /* the plugin cannot do this (type, parameter, op) */
  BATON_INVALID_ARGUMENT = 3, /* the model or a caller gave a bad value */
  BATON_OUT_OF_MEMORY = 4,
} baton_status;

typedef enum baton_plugin_kind {
  BATON_PLUGIN_OP_PACK = 1,  /* kernels for single ops */
  BATON_PLUGIN_DELEGATE = 2, /* claims connected subgraphs */
  BATON_PLUGIN_LOADER = 3,   /* ABI 1.2: wraps files of a foreign plugin format (see baton_loader_api) */
} baton_plugin_kind;

/* Element types. The values are TFLite's TensorType values, so a model's type passes through as is. */
typedef enum baton_tensor_type {
  BATON_TYPE_FLOAT32 = 0,
  BATON_TYPE_FLOAT16 = 1,
  BATON_TYPE_INT32 = 2,
  BATON_TYPE_UINT8 = 3,
  BATON_TYPE_INT64 = 4,
  BATON_TYPE_STRING = 5,
  BATON_TYPE_BOOL = 6,
  BATON_TYPE_INT16 = 7,
  BATON_TYPE_COMPLEX64 = 8,
  BATON_TYPE_INT8 = 9,
  BATON_TYPE_FLOAT64 = 10,
  BATON_TYPE_COMPLEX128 = 11,
  BATON_TYPE_UINT64 = 12,
  BATON_TYPE_RESOURCE = 13,
  BATON_TYPE_VARIANT = 14,
  BATON_TYPE_UINT32 = 15,
  BATON_TYPE_UINT16 = 16,
  BATON_TYPE_INT4 = 17,
  BATON_TYPE_BFLOAT16 = 18,
} baton_tensor_type;

/* Bytes of one element of the type; 0 for those without a fixed size (STRING, RESOURCE, VARIANT, and
 * INT4, two of which share a byte). A header-only helper: no symbol to link. */
static inline size_t baton_tensor_type_size(baton_tensor_type type) {
  switch (type) {
    case BATON_TYPE_BOOL: case BATON_TYPE_INT8: case BATON_TYPE_UINT8: return 1;
    case BATON_TYPE_FLOAT16: case BATON_TYPE_BFLOAT16: case BATON_TYPE_INT16: case BATON_TYPE_UINT16: return 2;
    case BATON_TYPE_FLOAT32: case BATON_TYPE_INT32: case BATON_TYPE_UINT32: return 4;
    case BATON_TYPE_FLOAT64: case BATON_TYPE_INT64: case BATON_TYPE_UINT64: case BATON_TYPE_COMPLEX64: return 8;
    case BATON_TYPE_COMPLEX128: return 16;
    default: return 0;
  }
}

/* The type's name as TFLite spells it ("FLOAT32"), for messages. A header-only helper: no symbol to link. */
static inline const char* baton_tensor_type_name(baton_tensor_type type) {
  switch (type) {
    case BATON_TYPE_FLOAT32: return "FLOAT32";
    case BATON_TYPE_FLOAT16: return "FLOAT16";
    case BATON_TYPE_INT32: return "INT32";
    case BATON_TYPE_UINT8: return "UINT8";
    case BATON_TYPE_INT64: return "INT64";
    case BATON_TYPE_STRING: return "STRING";
    case BATON_TYPE_BOOL: return "BOOL";
    case BATON_TYPE_INT16: return "INT16";
    case BATON_TYPE_COMPLEX64: return "COMPLEX64";
    case BATON_TYPE_INT8: return "INT8";
    case BATON_TYPE_FLOAT64: return "FLOAT64";
    case BATON_TYPE_COMPLEX128: return "COMPLEX128";
    case BATON_TYPE_UINT64: return "UINT64";
    case BATON_TYPE_RESOURCE: return "RESOURCE";
    case BATON_TYPE_VARIANT: return "VARIANT";
    case BATON_TYPE_UINT32: return "UINT32";
    case BATON_TYPE_UINT16: return "UINT16";
    case BATON_TYPE_INT4: return "INT4";
    case BATON_TYPE_BFLOAT16: return "BFLOAT16";
  }
  return "UNKNOWN";
}

typedef enum baton_log_level {
  BATON_LOG_DEBUG = 0,
  BATON_LOG_INFO = 1,
  BATON_LOG_WARNING = 2,
  BATON_LOG_ERROR = 3,
} baton_log_level;

/* TFLite's BuiltinOperator code of custom ops; a declaration with this code names its op by string. */
#define BATON_OP_CUSTOM 32
/* ABI 1.10: STABLEHLO_COMPOSITE, declared with the composite's name as custom_name (see baton_op_decl);
 * ABI 1.11: by delegates too. */
#define BATON_OP_STABLEHLO_COMPOSITE 206

/* Opaque handles, owned by the host. */
typedef struct baton_plugin_host baton_plugin_host; /* the host's view of one loaded plugin */
typedef struct baton_node baton_node;               /* one node (operator) of a model */
typedef struct baton_tensor baton_tensor;           /* one tensor of a model */
typedef struct baton_partition baton_partition;     /* a connected set of nodes given to a delegate */
typedef struct baton_error baton_error;             /* where a failing call writes its message */
typedef struct baton_graph baton_graph;             /* ABI 1.2: the graph a delegate selects nodes from */

/* ---------------------------------------------------------------------------------------------------
 * Parsed builtin options
 *
 * The host parses TFLite's builtin options into one struct per node. Options the model leaves out read
 * as TFLite's defaults. Only the member of `u` that matches the node's op is meaningful. `kind` is TFLite's
 * BuiltinOptions union type (1 = Conv2DOptions, 2 = DepthwiseConv2DOptions, ...; 0 = none), or for the
 * options of TFLite's second union (Operator.builtin_options_2: the STABLEHLO_* ops, DILATE, REDUCE_WINDOW)
 * BATON_OPTIONS_2_KIND plus that union's type (ABI 1.9).
 *
 * The host writes the struct, `struct_size` included. New members of `u` are appended, and each fits in
 * `reserved`, so the struct keeps the size plugins were built with. A member a later minor version added
 * (written next to it) is absent from an older host: it reads as zero but lies inside `struct_size`, so
 * BATON_STRUCT_HAS cannot tell; a plugin reading it checks the host's minor from the entry point and
 * refuses the node on an older host rather than run it with zeros.
 * ------------------------------------------------------------------------------------------------- */

typedef enum baton_padding { BATON_PADDING_SAME = 0, BATON_PADDING_VALID = 1 } baton_padding;

/* TFLite's ActivationFunctionType values. */
typedef enum baton_activation {
  BATON_ACT_NONE = 0,
  BATON_ACT_RELU = 1,
  BATON_ACT_RELU_N1_TO_1 = 2,
  BATON_ACT_RELU6 = 3,
  BATON_ACT_TANH = 4,
  BATON_ACT_SIGN_BIT = 5,
} baton_activation;

typedef struct baton_conv_options { /* CONV_2D, DEPTHWISE_CONV_2D */
  int32_t padding;                  /* baton_padding */
  int32_t stride_w, stride_h;
  int32_t dilation_w, dilation_h;
  int32_t depth_multiplier; /* DEPTHWISE_CONV_2D only */
  int32_t activation;       /* baton_activation */
} baton_conv_options;

typedef struct baton_pool_options { /* AVERAGE_POOL_2D, MAX_POOL_2D, L2_POOL_2D */
  int32_t padding;
  int32_t stride_w, stride_h;
  int32_t filter_w, filter_h;
  int32_t activation;
} baton_pool_options;

typedef struct baton_fully_connected_options {
  int32_t activation;
  int32_t weights_format; /* 0 = DEFAULT, 1 = SHUFFLED4x16INT8 */
  int32_t keep_num_dims;
  int32_t asymmetric_quantize_inputs;
} baton_fully_connected_options;

typedef struct baton_elementwise_options { /* ADD, SUB, MUL, DIV, L2_NORMALIZATION: the fused activation */
  int32_t activation;
  int32_t pot_scale_int16;
} baton_elementwise_options;

typedef struct baton_concat_options {
  int32_t axis;
  int32_t activation;
} baton_concat_options;

typedef struct baton_softmax_options {
  float beta;
} baton_softmax_options;

typedef struct baton_reshape_options {
  int32_t new_shape_count; /* -1 when the model gives no new_shape option */
  const int32_t* new_shape; /* borrowed from the model; valid while the node exists */
} baton_reshape_options;

typedef struct baton_resize_options { /* RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR */
  int32_t align_corners;
  int32_t half_pixel_centers;
} baton_resize_options;

typedef struct baton_reducer_options { /* MEAN, SUM, REDUCE_MAX, ... */
  int32_t keep_dims;
} baton_reducer_options;

typedef struct baton_strided_slice_options {
  int32_t begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask;
  int32_t offset;
} baton_strided_slice_options;

typedef struct baton_split_options { /* SPLIT, SPLIT_V */
  int32_t num_splits;
} baton_split_options;

typedef struct baton_pack_options { /* PACK (values_count) and UNPACK (num) */
  int32_t count;
  int32_t axis;
} baton_pack_options;

typedef struct baton_block_options { /* DEPTH_TO_SPACE, SPACE_TO_DEPTH */
  int32_t block_size;
} baton_block_options;

typedef struct baton_transpose_conv_options {
  int32_t padding;
  int32_t stride_w, stride_h;
  int32_t activation;
} baton_transpose_conv_options;

typedef struct baton_batch_matmul_options {
  int32_t adj_x, adj_y;
  int32_t asymmetric_quantize_inputs;
} baton_batch_matmul_options;

typedef struct baton_gather_options {
  int32_t axis;
  int32_t batch_dims;
} baton_gather_options;

typedef struct baton_leaky_relu_options {
  float alpha;
} baton_leaky_relu_options;

typedef struct baton_squeeze_options {
  int32_t squeeze_dims_count;
  const int32_t* squeeze_dims; /* borrowed from the model */
} baton_squeeze_options;

/* ABI 1.2: MIRROR_PAD. */
typedef enum baton_mirror_pad_mode { BATON_MIRROR_PAD_REFLECT = 0, BATON_MIRROR_PAD_SYMMETRIC = 1 } baton_mirror_pad_mode;

typedef struct baton_mirror_pad_options { /* ABI 1.2 */
  int32_t mode;                           /* baton_mirror_pad_mode */
} baton_mirror_pad_options;

typedef struct baton_cumsum_options { /* ABI 1.2 */
  int32_t exclusive, reverse;
} baton_cumsum_options;

typedef struct baton_one_hot_options { /* ABI 1.2 */
  int32_t axis;                        /* -1 = a new last axis */
} baton_one_hot_options;

typedef struct baton_gelu_options { /* ABI 1.2 */
  int32_t approximate;              /* 1 = the tanh approximation */
} baton_gelu_options;

typedef struct baton_lrn_options { /* ABI 1.2: LOCAL_RESPONSE_NORMALIZATION */
  int32_t radius;
  float bias, alpha, beta;
} baton_lrn_options;

typedef struct baton_conv3d_options { /* ABI 1.3: CONV_3D, CONV_3D_TRANSPOSE */
  int32_t padding;                      /* baton_padding */
  int32_t stride_d, stride_w, stride_h;
  int32_t dilation_d, dilation_w, dilation_h;
  int32_t activation; /* baton_activation */
} baton_conv3d_options;

typedef struct baton_bucketize_options { /* ABI 1.3 */
  int32_t boundaries_count;
  const float* boundaries; /* borrowed from the model; valid while the node exists */
} baton_bucketize_options;

typedef struct baton_reverse_sequence_options { /* ABI 1.3 */
  int32_t seq_dim, batch_dim;
} baton_reverse_sequence_options;

typedef struct baton_fake_quant_options { /* ABI 1.3 */
  float min, max;
  int32_t num_bits;
  int32_t narrow_range;
} baton_fake_quant_options;

typedef struct baton_sparse_to_dense_options { /* ABI 1.3 */
  int32_t validate_indices;
} baton_sparse_to_dense_options;

/* ABI 1.3: the recurrent and stateful ops (RNN, UNIDIRECTIONAL_SEQUENCE_RNN, BIDIRECTIONAL_SEQUENCE_RNN,
 * SVDF, LSTM, UNIDIRECTIONAL_SEQUENCE_LSTM, BIDIRECTIONAL_SEQUENCE_LSTM); each reads the fields its
 * TFLite options table has, the others are zero. */
typedef struct baton_recurrent_options {
  int32_t activation;    /* baton_activation */
  int32_t time_major;    /* sequence ops: 1 = [time, batch, ...], 0 = [batch, time, ...] */
  int32_t merge_outputs; /* bidirectional ops: both directions in the first output */
  int32_t rank;          /* SVDF */
  float cell_clip;       /* LSTM ops: 0 = no clipping */
  float proj_clip;       /* LSTM ops: 0 = no clipping */
  int32_t kernel_type;   /* LSTM: 0 = FULL, 1 = BASIC */
  int32_t asymmetric_quantize_inputs;
} baton_recurrent_options;

/* ABI 1.5: RANDOM_UNIFORM, RANDOM_STANDARD_NORMAL, MULTINOMIAL. Both 0: seeded from the system's entropy. */
typedef struct baton_random_options {
  int64_t seed, seed2;
} baton_random_options;

/* ABI 1.5: EMBEDDING_LOOKUP_SPARSE's combiner, TFLite's CombinerType. */
typedef enum baton_combiner { BATON_COMBINER_SUM = 0, BATON_COMBINER_MEAN = 1, BATON_COMBINER_SQRTN = 2 } baton_combiner;

typedef struct baton_embedding_lookup_sparse_options { /* ABI 1.5 */
  int32_t combiner;                                    /* baton_combiner */
} baton_embedding_lookup_sparse_options;

/* ABI 1.5: LSH_PROJECTION's type, TFLite's LSHProjectionType (0 = UNKNOWN, 1 = SPARSE, 2 = DENSE). */
typedef struct baton_lsh_projection_options {
  int32_t type;
} baton_lsh_projection_options;

/* ABI 1.7: SKIP_GRAM's options (TFLite's SkipGramOptions). */
typedef struct baton_skip_gram_options {
  int32_t ngram_size;
  int32_t max_skip_size;
  int32_t include_all_ngrams;
} baton_skip_gram_options;

/* ABI 1.9: `kind` of the options of TFLite's second union (BuiltinOptions2): this plus its type. */
#define BATON_OPTIONS_2_KIND 1000

/* ABI 1.9: a window reduction, TFLite's ReduceWindowFunction (REDUCE_WINDOW's option); for
 * STABLEHLO_REDUCE_WINDOW the host names the one op of the body subgraph the same way. */
typedef enum baton_window_reduction {
  BATON_WINDOW_REDUCTION_UNSUPPORTED = 0, /* none, or a body the host does not recognise */
  BATON_WINDOW_REDUCTION_ADD = 1,
  BATON_WINDOW_REDUCTION_MUL = 2,
  BATON_WINDOW_REDUCTION_MINIMUM = 3,
  BATON_WINDOW_REDUCTION_MAXIMUM = 4,
  BATON_WINDOW_REDUCTION_ALL = 5, /* logical and */
  BATON_WINDOW_REDUCTION_ANY = 6, /* logical or */
  BATON_WINDOW_REDUCTION_REPLACE = 7, /* ABI 1.12, STABLEHLO_SCATTER only: a body without ops (the update wins) */
} baton_window_reduction;

typedef struct baton_reduce_window_options { /* ABI 1.9: REDUCE_WINDOW */
  int32_t reduce_function;                   /* baton_window_reduction */
} baton_reduce_window_options;

/* ABI 1.9: STABLEHLO_PAD. Arrays borrowed from the model (NULL with a count of 0 when absent), one entry
 * per dimension of the operand. */
typedef struct baton_stablehlo_pad_options {
  int32_t edge_padding_low_count, edge_padding_high_count, interior_padding_count;
  const int64_t* edge_padding_low;
  const int64_t* edge_padding_high;
  const int64_t* interior_padding;
} baton_stablehlo_pad_options;

/* ABI 1.9: STABLEHLO_REDUCE_WINDOW. Arrays borrowed from the model (NULL with a count of 0 when absent);
 * padding holds a (low, high) pair per dimension. `body` is the reduction of the body subgraph, which the
 * host recognises when it is one ADD, MUL, MAXIMUM, MINIMUM, LOGICAL_AND or LOGICAL_OR (or their
 * STABLEHLO_ forms) and nothing else. */
typedef struct baton_stablehlo_reduce_window_options {
  int32_t window_dimensions_count, window_strides_count, base_dilations_count, window_dilations_count;
  int32_t padding_count;
  int32_t body; /* baton_window_reduction */
  const int64_t* window_dimensions;
  const int64_t* window_strides;
  const int64_t* base_dilations;
  const int64_t* window_dilations;
  const int64_t* padding;
  int32_t body_subgraph_index;
} baton_stablehlo_reduce_window_options;

/* ABI 1.12: STABLEHLO_GATHER (StableHLO's gather: slices of the operand at start indices read from the
 * second input). Arrays borrowed from the model (NULL with a count of 0 when absent). */
typedef struct baton_stablehlo_gather_options {
  int32_t offset_dims_count, collapsed_slice_dims_count, start_index_map_count, slice_sizes_count;
  const int64_t* offset_dims;
  const int64_t* collapsed_slice_dims;
  const int64_t* start_index_map;
  const int64_t* slice_sizes;
  int64_t index_vector_dim;
  int32_t indices_are_sorted; /* a promise of the model's; the result does not depend on it */
} baton_stablehlo_gather_options;

/* ABI 1.12: STABLEHLO_SCATTER (the operand with updates combined in at positions read from the second
 * input). Arrays borrowed from the model (NULL with a count of 0 when absent). `body` is the combination
 * the update computation subgraph makes, which the host recognises when it is one ADD, MUL, MAXIMUM,
 * MINIMUM, LOGICAL_AND or LOGICAL_OR (or their STABLEHLO_ forms), or no op at all (REPLACE). */
typedef struct baton_stablehlo_scatter_options {
  int32_t update_window_dims_count, inserted_window_dims_count, scatter_dims_to_operand_dims_count;
  int32_t body; /* baton_window_reduction */
  const int64_t* update_window_dims;
  const int64_t* inserted_window_dims;
  const int64_t* scatter_dims_to_operand_dims;
  int64_t index_vector_dim;
  int32_t indices_are_sorted, unique_indices; /* promises of the model's; the result does not depend on them */
  int32_t update_computation_subgraph_index;
} baton_stablehlo_scatter_options;

/* ABI 1.12: STABLEHLO_RNG_BIT_GENERATOR's algorithm, TFLite's RngAlgorithm. */
typedef enum baton_rng_algorithm {
  BATON_RNG_DEFAULT = 0, /* the runtime's choice: Philox, as LiteRT's */
  BATON_RNG_PHILOX = 1,
  BATON_RNG_THREEFRY = 2,
} baton_rng_algorithm;

typedef struct baton_rng_bit_generator_options { /* ABI 1.12 */
  int32_t algorithm;                             /* baton_rng_algorithm */
} baton_rng_bit_generator_options;

typedef struct baton_builtin_options {
  size_t struct_size;
  int32_t kind; /* TFLite BuiltinOptions union type; 0 when the op has none */
  union {
    baton_conv_options conv;
    baton_pool_options pool;
    baton_fully_connected_options fully_connected;
    baton_elementwise_options elementwise;
    baton_concat_options concat;
    baton_softmax_options softmax;
    baton_reshape_options reshape;
    baton_resize_options resize;
    baton_reducer_options reducer;
    baton_strided_slice_options strided_slice;
    baton_split_options split;
    baton_pack_options pack;
    baton_block_options block;
    baton_transpose_conv_options transpose_conv;
    baton_batch_matmul_options batch_matmul;
    baton_gather_options gather;
    baton_leaky_relu_options leaky_relu;
    baton_squeeze_options squeeze;
    baton_mirror_pad_options mirror_pad; /* ABI 1.2 */
    baton_cumsum_options cumsum;         /* ABI 1.2 */
    baton_one_hot_options one_hot;       /* ABI 1.2 */
    baton_gelu_options gelu;             /* ABI 1.2 */
    baton_lrn_options lrn;               /* ABI 1.2 */
    baton_conv3d_options conv3d;                     /* ABI 1.3 */
    baton_bucketize_options bucketize;               /* ABI 1.3 */
    baton_reverse_sequence_options reverse_sequence; /* ABI 1.3 */
    baton_fake_quant_options fake_quant;             /* ABI 1.3 */
    baton_sparse_to_dense_options sparse_to_dense;   /* ABI 1.3 */
    baton_recurrent_options recurrent;               /* ABI 1.3 */
    baton_random_options random;                     /* ABI 1.5 */
    baton_embedding_lookup_sparse_options embedding_lookup_sparse; /* ABI 1.5 */
    baton_lsh_projection_options lsh_projection;     /* ABI 1.5 */
    baton_skip_gram_options skip_gram;               /* ABI 1.7 */
    baton_reduce_window_options reduce_window;       /* ABI 1.9 */
    baton_stablehlo_pad_options stablehlo_pad;       /* ABI 1.9 */
    baton_stablehlo_reduce_window_options stablehlo_reduce_window; /* ABI 1.9 */
    baton_stablehlo_gather_options stablehlo_gather; /* ABI 1.12 */
    baton_stablehlo_scatter_options stablehlo_scatter; /* ABI 1.12 */
    baton_rng_bit_generator_options rng_bit_generator; /* ABI 1.12 */
    unsigned char reserved[128]; /* room to add members without changing the struct's size */
  } u;
} baton_builtin_options;

/* The union's size is part of the ABI: a member that outgrows `reserved` needs a new major version. */
#if defined(__cplusplus) && __cplusplus >= 201103L
static_assert(sizeof(baton_builtin_options::u) == 128, "baton_builtin_options.u must stay 128 bytes");
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
_Static_assert(sizeof(((baton_builtin_options*)0)->u) == 128, "baton_builtin_options.u must stay 128 bytes");
#endif

/* Quantization of a tensor. scale_count is 0 for a tensor that is not quantized; 1 for per-tensor;
 * the size of dimension `quantized_dimension` for per-channel. Arrays are borrowed from the model.
 * ABI 1.13: blockwise quantization (the schema's BlockwiseQuantization, what weight-only quantizers write
 * for large FULLY_CONNECTED weights): block_size > 0 and scale_count 0. The tensor's last dimension is cut
 * into runs of block_size elements, each with its own scale: block_scales holds block_scale_count values of
 * block_scale_type (FLOAT16 or FLOAT32), row-major in the shape of the tensor with its last dimension
 * divided by block_size; real = scale * code (no zero points: the host refuses a model that gives them).
 * An out-struct: the plugin owns it, zero-initialises it and sets `struct_size` to
 * sizeof(baton_quantization) before calling tensor_quantization (0 is read as the host's own size); the
 * host writes no more than that many bytes and no field it does not know, so such a field stays zero. */
typedef struct baton_quantization {
  size_t struct_size;
  int32_t scale_count;
  const float* scales;
  const int64_t* zero_points; /* scale_count entries, or NULL when the model gives none (all zero) */
  int32_t quantized_dimension;
  int32_t block_size;                  /* ABI 1.13: 0 unless blockwise */
  baton_tensor_type block_scale_type;  /* ABI 1.13 */
  int32_t block_scale_count;           /* ABI 1.13 */
  const void* block_scales;            /* ABI 1.13: borrowed from the model */
} baton_quantization;

/* ---------------------------------------------------------------------------------------------------
 * The host table: everything a plugin may call. Given to the entry point; valid until the plugin is
 * unloaded. Unless noted, every function may be called from any thread the host called the plugin on,
 * and only during a call from the host into the plugin. The host writes it, `struct_size` included.
 *
 * Its functions lie in the order the minor versions appended them; by noun (ABI 1.0 unless marked):
 *   messages     error_set, log
 *   options      option_string, option_int, option_float, option_bool, thread_count;
 *                option_entry, plugin_path (1.2)
 *   nodes        node_index, node_builtin_code, node_custom_name, node_version, node_input_count,
 *                node_input, node_output_count, node_output, node_builtin_options, node_custom_options;
 *                node_intermediate_count, node_intermediate (1.3)
 *   tensors      tensor_index, tensor_name, tensor_type, tensor_shape, tensor_byte_size,
 *                tensor_is_constant, tensor_data, tensor_mutable_data, tensor_quantization,
 *                tensor_set_shape; tensor_set_dynamic (1.2); tensor_set_byte_size (1.7)
 *   partitions   partition_id, partition_node_count, partition_node, partition_input_count,
 *                partition_input, partition_output_count, partition_output; partition_selection (1.2);
 *                partition_request_scratch, partition_scratch (1.6); partition_input_reusable (1.8)
 *   graphs       graph_node_count, graph_node, graph_tensor_count, graph_tensor (1.2)
 *   files        file_exports_symbol (1.2)
 *   sharing      shared_object (1.4)
 * A plugin that calls only ABI 1.0 functions tests for the last of them it calls, in this order: an op
 * pack usually tensor_set_shape, a delegate partition_output (op-packs/examples/atan/atan.c does so).
 * ------------------------------------------------------------------------------------------------- */

typedef struct baton_host_api {
  size_t struct_size;
  uint32_t abi_major, abi_minor; /* the host's ABI version */

  /* Messages. `error_set` copies `message` into the host-owned error; calling it again replaces the
   * text. `log` writes one line attributed to the plugin. */
  void (*error_set)(baton_error* error, const char* message);
  void (*log)(const baton_plugin_host* host, baton_log_level level, const char* message);

  /* Options the plugin declared, as configured (or their declared defaults). The host has already
   * checked every configured value against the declared type. Unknown names return the fallback. The
   * returned string is borrowed until the plugin is unloaded. */
  const char* (*option_string)(const baton_plugin_host* host, const char* name, const char* fallback);
  int64_t (*option_int)(const baton_plugin_host* host, const char* name, int64_t fallback);
  double (*option_float)(const baton_plugin_host* host, const char* name, double fallback);
  int32_t (*option_bool)(const baton_plugin_host* host, const char* name, int32_t fallback);
  /* Threads the plugin may use: its own `threads` option when configured, else the run's --threads,
   * else the number of cores. */
  int32_t (*thread_count)(const baton_plugin_host* host);

  /* Nodes. Borrowed handles, valid from the call that passed the node until that partition or kernel
   * is freed. `node_builtin_code` gives the real op code (the larger of TFLite's two op-code fields). */
  int32_t (*node_index)(const baton_node* node);
  int32_t (*node_builtin_code)(const baton_node* node);
  const char* (*node_custom_name)(const baton_node* node); /* NULL unless a custom op or (ABI 1.10) a composite */
  int32_t (*node_version)(const baton_node* node);
  int32_t (*node_input_count)(const baton_node* node);
  /* NULL for an omitted optional input (index -1 in the model). */
  baton_tensor* (*node_input)(const baton_node* node, int32_t i);
  int32_t (*node_output_count)(const baton_node* node);
  baton_tensor* (*node_output)(const baton_node* node, int32_t i);
  /* Never NULL; host-owned and valid as long as the node. */
  const baton_builtin_options* (*node_builtin_options)(const baton_node* node);
  /* Raw custom options bytes (FlexBuffer for most custom ops); *size is set to 0 when the node has none. */
  const uint8_t* (*node_custom_options)(const baton_node* node, size_t* size);

  /* Tensors. */
  int32_t (*tensor_index)(const baton_tensor* tensor);
  const char* (*tensor_name)(const baton_tensor* tensor);
  baton_tensor_type (*tensor_type)(const baton_tensor* tensor);
  /* Shape: returns the rank; *dims points at host-owned storage valid until the shape changes. */
  int32_t (*tensor_shape)(const baton_tensor* tensor, const int32_t** dims);
  size_t (*tensor_byte_size)(const baton_tensor* tensor);
  int32_t (*tensor_is_constant)(const baton_tensor* tensor);
  /* Read-only data. Constant tensors: valid from the first call that sees the tensor. Other tensors:
   * valid only during invoke (NULL during prepare: memory is planned after every prepare). */
  const void* (*tensor_data)(const baton_tensor* tensor);
  /* Writable data of a non-constant tensor, during invoke only; NULL otherwise. */
  void* (*tensor_mutable_data)(baton_tensor* tensor);
  void (*tensor_quantization)(const baton_tensor* tensor, baton_quantization* out);
  /* Set the shape of an output of the node being prepared. Only during prepare, only for that node's
   * outputs (or a partition's outputs), never for model inputs or constants. */
  baton_status (*tensor_set_shape)(baton_tensor* tensor, int32_t rank, const int32_t* dims,
                                   baton_error* error);

  /* Partitions (delegates only). Nodes are listed in execution order; inputs and outputs are the host
   * tensors that cross the partition's boundary (constants consumed inside are not inputs). */
  int32_t (*partition_id)(const baton_partition* partition);
  int32_t (*partition_node_count)(const baton_partition* partition);
  const baton_node* (*partition_node)(const baton_partition* partition, int32_t i);
  int32_t (*partition_input_count)(const baton_partition* partition);
  baton_tensor* (*partition_input)(const baton_partition* partition, int32_t i);
  int32_t (*partition_output_count)(const baton_partition* partition);
  baton_tensor* (*partition_output)(const baton_partition* partition, int32_t i);

  /* ABI 1.2: absent from an older host. */
  /* The file the plugin was loaded from (for a wrapped plugin, the wrapped file). Borrowed until unload. */
  const char* (*plugin_path)(const baton_plugin_host* host);
  /* The plugin's effective options in name order: entry i (0-based) into *name and *value, both borrowed
   * until unload. Returns 0 past the last entry. For plugins with BATON_PLUGIN_FLAG_ANY_OPTIONS this is
   * how they learn the keys of their [plugin.NAME] section. */
  int32_t (*option_entry)(const baton_plugin_host* host, int32_t i, const char** name, const char** value);
  /* Whether the shared object at `path` exports `symbol` in its ELF dynamic symbol table, read from the
   * file without loading it: 1 yes, 0 no, -1 the file could not be read that way. For loaders. */
  int32_t (*file_exports_symbol)(const char* path, const char* symbol);
  /* The graph a delegate selects from (see select_nodes). Node and tensor indices are the model's.
   * graph_node is NULL for an index out of range and for a node that does not run (folded at load, or
   * dead); handles are valid until the selection is freed. */
  int32_t (*graph_node_count)(const baton_graph* graph);
  const baton_node* (*graph_node)(const baton_graph* graph, int32_t index);
  int32_t (*graph_tensor_count)(const baton_graph* graph);
  baton_tensor* (*graph_tensor)(const baton_graph* graph, int32_t index);
  /* The selection state select_nodes returned for the round that made this partition (NULL for a
   * delegate without select_nodes). */
  void* (*partition_selection)(const baton_partition* partition);

  /* Outputs whose shape depends on the data. A kernel whose prepare cannot know an output's shape (it
   * needs the values of a non-constant input: tensor_data is NULL) calls this on that output and returns
   * BATON_OK. The host
   * then prepares the node again at every invoke, just before running it, when tensor_data of every
   * input is valid, and that prepare sets the output shapes with tensor_set_shape as usual; the memory of
   * such outputs lives outside the planned arena. Nodes that read such an output are prepared at invoke
   * the same way, and delegates are never given them. Only during prepare, only for the node's outputs. */
  baton_status (*tensor_set_dynamic)(baton_tensor* tensor, baton_error* error);

  /* ABI 1.3: absent from an older host. */
  /* A node's intermediate tensors (the schema's Operator.intermediates), in the model's order: tensors no
   * node reads or writes, which carry a quantization a kernel computes with (TFLite's integer LSTMs take
   * the scales of their gate matmuls and of the hidden value from them). Read them with tensor_type,
   * tensor_shape and tensor_quantization; they have no data. Borrowed, valid as long as the node. */
  int32_t (*node_intermediate_count)(const baton_node* node);
  baton_tensor* (*node_intermediate)(const baton_node* node, int32_t i);

  /* ABI 1.4: absent from an older host. */
  /* An object the plugins of one host share, by key. The first call with a key calls create(context)
   * and keeps what it returns (when that is NULL, nothing is kept and NULL is returned); every later call
   * with the key, from any plugin, returns the kept object without calling create. The host calls
   * destroy(object) once, after every plugin's destroy and before any plugin's library is unloaded, in
   * the reverse order of creation (a plugin in an isolated process shares with itself only, and its
   * objects end with that process). Thread-safe; the object itself must be safe for every plugin that
   * may use it from several threads.
   * Convention: the key "pthreadpool/N" names a `pthreadpool_t` of N threads (libpthreadpool), made by
   * pthreadpool_create(N) and ended by pthreadpool_destroy; plugins that compute on such a pool share
   * one set of threads instead of each starting N threads that compete for the same cores. */
  void* (*shared_object)(const baton_plugin_host* host, const char* key, void* (*create)(void* context),
                         void (*destroy)(void* object), void* context);

  /* ABI 1.6: absent from an older host. */
  /* Scratch memory of a delegate partition, placed by the host in the arena it plans for the tensors:
   * it is alive only while the partition runs, so it shares memory with the tensors that are not alive
   * then and with the scratch of the other partitions, where memory of the delegate's own would add to
   * them. During partition_prepare, partition_request_scratch asks for `bytes` (0: none; the last request
   * of a prepare counts; every prepare starts from none). From the end of a successful prepare to the
   * next prepare, partition_scratch gives its address (64-byte aligned; NULL when none was asked for),
   * which may change with every prepare. Its contents do not survive from one invoke to the next. A host
   * that cannot give it (in this version, the host of a plugin in a process of its own) returns
   * BATON_UNSUPPORTED with a reason, and the plugin keeps memory of its own. */
  baton_status (*partition_request_scratch)(const baton_partition* partition, size_t bytes, baton_error* error);
  void* (*partition_scratch)(const baton_partition* partition);

  /* ABI 1.7: absent from an older host, which refuses string tensors. */
  /* String tensors (BATON_TYPE_STRING) hold TFLite's packed layout (baton/string_tensor.hpp reads and
   * writes it): an int32 count N, N + 1 int32 offsets from the buffer's start, then the bytes. Their byte
   * size comes from their contents, so every non-constant string tensor is dynamic (see
   * tensor_set_dynamic): the host prepares the node that writes one at every invoke, with its inputs'
   * values, and that prepare sets the output's shape (tensor_set_shape) and then its byte size with this
   * call, at least 4 * (N + 2) for N elements. Only during prepare, only for the node's string outputs.
   * The host checks the buffer the kernel wrote (count, offsets within it) before any other node reads
   * it, and fails the node if it is not well formed. */
  baton_status (*tensor_set_byte_size)(baton_tensor* tensor, size_t bytes, baton_error* error);

  /* ABI 1.8: absent from an older host. */
  /* Memory a delegate may compute in during partition_invoke besides its scratch. An output's
   * (tensor_mutable_data, tensor_byte_size bytes) is the delegate's until it writes the output's values,
   * in every version. An input's is the delegate's once it has read the input for the last time in the
   * invoke when this returns 1 for the input's position among the partition inputs: no node outside the
   * partition reads the tensor, and it is not an input, output or variable of the graph, nor dynamic.
   * 0 otherwise, and when the host cannot say (in this version, the host of a plugin in a process of its
   * own). The answer holds from partition_prepare to the next prepare. A partition that keeps one large
   * input alive while it runs needs no memory beside it for what it computes after the input's last read. */
  int32_t (*partition_input_reusable)(const baton_partition* partition, int32_t index);

  /* ABI 1.14: absent from an older host. */
  /* Scratch memory of an op-pack node, in the host's arena as a partition's (ABI 1.6): alive only while the
   * node runs, so the scratch of every node of a graph shares one place, where memory of each kernel's own
   * would add up. During the kernel's prepare, node_request_scratch asks for `bytes` (0: none; the last
   * request of a prepare counts; every prepare starts from none). From the end of a successful prepare
   * to the next prepare, node_scratch gives its address (64-byte aligned; NULL when none was asked for),
   * which may change with every prepare. Its contents do not survive from one invoke to the next. A host
   * that cannot give it returns BATON_UNSUPPORTED with a reason, and the kernel keeps memory of its own: in
   * this version, a prepare outside the graph's memory plan (a node prepared at every invoke because its
   * shapes depend on data, or one computed once at load) and the host of a plugin in a process of its own. */
  baton_status (*node_request_scratch)(const baton_node* node, size_t bytes, baton_error* error);
  void* (*node_scratch)(const baton_node* node);

  /* ABI 1.15: absent from an older host. */
  /* Advice from a prepare (a node's or a partition's): the plugin has copied what it needs of this constant
   * tensor (packed weights, say) and will not read its data again before its next prepare. The host may
   * give the memory the data occupies in a model file it mapped back to the system, so that weights a
   * kernel repacks count once in the process's memory instead of twice. The data stays valid and readable:
   * a later read maps it again from the file, at the cost of a page fault, so calling this too early is
   * never wrong, only slower. Ignored for a tensor that is not constant or whose data is not in a mapped
   * file (a model loaded from memory, a constant the host computed) and, in this version, by the host of a
   * plugin in a process of its own. */
  void (*tensor_release_constant)(const baton_tensor* tensor);

  /* ABI 1.16: absent from an older host. */
  /* During select_nodes only: the reason this free node (a node index of `graph`) is not taken, shown for
   * it in the plan in place of the message select_nodes leaves in its error (the last call for a node
   * counts; the text is copied). A delegate that chooses from the whole graph can so say per node why,
   * as check_node does. Ignored for a node that is not free, for a node the delegate then selects, outside
   * select_nodes, and, in this version, by the host of a plugin in a process of its own. */
  void (*graph_refuse_node)(const baton_graph* graph, int32_t node, const char* reason);
} baton_host_api;

/* ---------------------------------------------------------------------------------------------------
 * What a plugin declares. The plugin writes these structs (static storage, usually), `struct_size`
 * included: sizeof the struct as the plugin was built; the host reads them.
 * ------------------------------------------------------------------------------------------------- */

typedef enum baton_option_type {
  BATON_OPTION_BOOL = 1,   /* true/false, yes/no, on/off, 1/0 */
  BATON_OPTION_INT = 2,    /* decimal integer */
  BATON_OPTION_FLOAT = 3,  /* decimal number */
  BATON_OPTION_STRING = 4, /* any text */
} baton_option_type;

typedef struct baton_option_decl {
  size_t struct_size;
  const char* name;          /* [a-z0-9-]+ */
  baton_option_type type;
  const char* default_value; /* text, parsed like a configured value; NULL = no default */
  const char* help;          /* one line for `baton plugins` */
} baton_option_decl;

/* An op-pack kernel: the four calls the host makes for each node the kernel runs. `plugin_state` is
 * what `create` returned. `node_state` is what `init` stored (may stay NULL).
 *  - init:    once per node, before its first prepare. May allocate node_state.
 *  - prepare: after init and again whenever an input shape changes. Checks types, shapes and
 *             parameters, sets output shapes, allocates scratch. Non-constant data is not readable.
 *  - invoke:  computes. Must not allocate. Reads inputs, writes outputs. Not called for a node of a
 *             builtin op (not CUSTOM) whose every output has no elements after its prepare, nor for one
 *             with a string output: there is nothing to compute (since ABI 1.15's host).
 *  - free:    once, releases node_state. Called even if prepare failed.
 * For one node, the host never runs two of these calls at once. Calls for different nodes may run
 * concurrently only if the plugin sets BATON_PLUGIN_FLAG_REENTRANT. */
typedef struct baton_kernel {
  size_t struct_size;
  baton_status (*init)(void* plugin_state, const baton_node* node, void** node_state,
                       baton_error* error);
  void (*free)(void* plugin_state, void* node_state);
  baton_status (*prepare)(void* plugin_state, void* node_state, const baton_node* node,
                          baton_error* error);
  baton_status (*invoke)(void* plugin_state, void* node_state, const baton_node* node,
                         baton_error* error);
} baton_kernel;

/* One op the plugin handles: a builtin op code, or BATON_OP_CUSTOM with `custom_name`; versions
 * min_version..max_version inclusive. Op packs give the kernel; delegates leave it NULL.
 * ABI 1.10: BATON_OP_STABLEHLO_COMPOSITE with `custom_name` the composite's name
 * ("odml.scaled_dot_product_attention") claims the composites of that name: an op pack's kernel runs them
 * in place of their decomposition subgraph. Such a node's node_custom_name is the composite's name, its
 * node_custom_options the composite's attributes (a flexbuffer map), its node_version the op's version. A
 * host older than 1.10 runs every composite's decomposition and never offers one to a plugin.
 * ABI 1.11: a delegate that declares a composite so is offered its nodes too (check_node, partitions), and
 * runs the whole operation in its partition; a composite no delegate takes runs on the op pack that
 * claims it, else its decomposition. A 1.10 host offers composites to op packs only. */
typedef struct baton_op_decl {
  size_t struct_size;
  int32_t builtin_code;
  const char* custom_name;
  int32_t min_version, max_version;
  const baton_kernel* kernel;
} baton_op_decl;

/* A delegate's calls. A partition's calls are made in the order init, prepare (again after input
 * shape changes), invoke (any number of times), free.
 *  - check_node: may this delegate take `node`? Return 1 for yes. For no, return 0 and write the
 *    reason ("dilation not supported", "int8 input") with error_set. Called only for nodes whose op
 *    and version the delegate declared. Must not keep the node handle.
 *  - partition_init: build what is needed to run the partition (compile, pack weights). May fail; the
 *    host then gives the partition's nodes to the next delegate or to op packs.
 *  - partition_prepare: shapes of the partition's inputs are known; set the outputs' shapes.
 *  - partition_invoke: read the partition's input tensors, write its output tensors.
 *  - partition_free: release partition_state. Called even when init failed (with NULL). */
typedef struct baton_delegate_api {
  size_t struct_size;
  int32_t (*check_node)(void* plugin_state, const baton_node* node, baton_error* reason);
  baton_status (*partition_init)(void* plugin_state, const baton_partition* partition,
                                 void** partition_state, baton_error* error);
  baton_status (*partition_prepare)(void* plugin_state, void* partition_state,
                                    const baton_partition* partition, baton_error* error);
  baton_status (*partition_invoke)(void* plugin_state, void* partition_state,
                                   const baton_partition* partition, baton_error* error);
  void (*partition_free)(void* plugin_state, void* partition_state);

  /* ABI 1.2, optional. For a delegate that chooses its nodes by looking at the whole graph (TFLite's
   * delegates do): when set, the host calls it instead of check_node, once per partitioning round, and
   * does not hold the nodes against the delegate's op declarations. `free_nodes` lists, in execution
   * order, the running nodes no earlier delegate of the chain holds and this delegate has not lost;
   * the delegate sets selected[i] to 1 for each free_nodes[i] it takes (the host zeroes the array) and
   * may store a state in *selection_state, which the host hands back through partition_selection for
   * every partition of the round and releases with selection_free once those partitions are freed
   * (also after a failed call). The host groups the selected nodes into partitions as it groups
   * check_node's answers, then calls partition_init for each.
   * On BATON_OK, a message written to `error` is the reason shown for the free nodes not selected. On
   * failure the delegate takes no node this round, with the message as the reason. */
  baton_status (*select_nodes)(void* plugin_state, const baton_graph* graph, const int32_t* free_nodes,
                               int32_t free_count, uint8_t* selected, void** selection_state, baton_error* error);
  void (*selection_free)(void* plugin_state, void* selection_state);
} baton_delegate_api;

/* ---------------------------------------------------------------------------------------------------
 * Devices (ABI 1.1, delegates only)
 *
 * A delegate says which devices it can run on through `probe_devices` in its descriptor. The host calls
 * the probe only when it needs the answer: to build the default delegate chain (no `delegates` key in the
 * config and no --delegate), for `baton plugins`, and for a delegate in the chain. It may be called
 * before `create` (and for a delegate that is never created), so it must not depend on plugin state; it
 * may read the plugin's options through the host table. A probe should be cheap: a delegate whose
 * devices are found by loading a driver should cache the answer or ask in another process, so that
 * probing costs the host neither the driver's memory nor its start-up time.
 *
 * The default chain orders delegates by their best device: NPU, then GPU, then CPU. A delegate whose
 * only devices are EMULATED (a CPU implementation of a GPU API: Mesa's lavapipe/llvmpipe, SwiftShader)
 * is left out of it: such a device is slower than a CPU delegate. A delegate without a probe (an ABI 1.0
 * plugin) counts as one CPU device of preference 0; a probe that finds no device leaves the delegate out.
 * Among delegates whose best devices are of the same kind, the higher `preference` of that device comes
 * first, then the delegate's name. A configured `delegates` list or --delegate decides exactly,
 * emulated devices included.
 * ------------------------------------------------------------------------------------------------- */

typedef enum baton_device_kind {
  BATON_DEVICE_NPU = 1,      /* a neural / AI accelerator */
  BATON_DEVICE_GPU = 2,      /* a real GPU: discrete, integrated or virtualised hardware */
  BATON_DEVICE_CPU = 3,      /* the host's CPU */
  BATON_DEVICE_EMULATED = 4, /* a CPU implementation of an accelerator's API */
} baton_device_kind;

/* Preference values, among delegates whose best devices are of the same kind (higher first):
 *    0  no opinion: a general delegate for that kind of device (baton's xnnpack and vulkan).
 *  > 0  a delegate tuned for this device that should go before general ones (a vendor's own, or a
 *       delegate that runs a subset faster and gives the rest to later delegates): 10 to 100.
 *  < 0  a fallback that should go after general ones (a reference or debugging delegate): -100 to -10.
 * The host clamps values to -1000..1000. */
#define BATON_DEVICE_PREFERENCE_DEFAULT 0

/* Written by the plugin, `struct_size` included (sizeof(baton_device) as it was built). */
typedef struct baton_device {
  size_t struct_size;
  const char* name;   /* "NVIDIA GeForce RTX 3060", "Intel(R) Core(TM) i7-1165G7"; never NULL */
  int32_t kind;       /* baton_device_kind */
  int32_t preference; /* see above */
} baton_device;

/* Lists the devices the delegate can run on, in its own order of preference. On success sets *devices
 * to an array of *count entries (stepped by their struct_size; 0 entries means "no device here"), owned
 * by the plugin and valid until the plugin is unloaded or the probe is called again. On failure returns a
 * status other than BATON_OK with the reason in `error`; the delegate is then left out of the default
 * chain with that reason. */
typedef baton_status (*baton_probe_devices_fn)(const baton_plugin_host* host, const baton_device** devices,
                                               size_t* count, baton_error* error);

/* The plugin may be called from several threads at once for different nodes/partitions. */
#define BATON_PLUGIN_FLAG_REENTRANT 0x1u
/* ABI 1.2: the plugin takes any key of its [plugin.NAME] section as a string option (read them with
 * option_entry). The host cannot validate them; `baton plugins` says so. For wrapped foreign plugins. */
#define BATON_PLUGIN_FLAG_ANY_OPTIONS 0x2u

/* ---------------------------------------------------------------------------------------------------
 * Loaders (ABI 1.2)
 *
 * A loader wraps files of a foreign plugin format into ordinary baton plugins. After every folder has
 * been read, the host offers each file that has no `baton_plugin_entry` to the loaders, in load order;
 * the first that wraps it wins. A loader is created at load, like an op pack.
 * ------------------------------------------------------------------------------------------------- */

typedef struct baton_plugin_desc baton_plugin_desc;

typedef struct baton_loader_api { /* written by the plugin, `struct_size` included */
  size_t struct_size;
  /* Returns the descriptor of the plugin `path` stands for (owned by the loader, valid until the loader
   * is destroyed), or NULL: with no message in `error` when the file is not of the loader's format
   * (the host goes on to the next loader), with the reason when it is but cannot be used (the file is
   * skipped with that reason). Later calls for the wrapped plugin (create, destroy, delegate functions)
   * get the wrapped plugin's own host handle; plugin_path tells which file it is. Should decide from
   * file_exports_symbol before opening the file. */
  const baton_plugin_desc* (*wrap_file)(void* plugin_state, const char* path, baton_error* error);
  /* Optional. Wraps an object of a foreign plugin format that a program hands to the host in-process
   * (the TFLite-compatible library passes each TfLiteDelegate* of TfLiteInterpreterOptionsAddDelegate
   * with format "TfLiteDelegate"), as the plugin `name`. The object is borrowed: its owner keeps it
   * alive while the host uses the plugin. Answers as wrap_file does; plugin_path gives the wrapped
   * plugin a path of the form "FORMAT@ADDRESS". */
  const baton_plugin_desc* (*wrap_object)(void* plugin_state, const char* format, void* object, const char* name,
                                          baton_error* error);
} baton_loader_api;

/* The descriptor. Written by the plugin, `struct_size` included (sizeof(baton_plugin_desc) as it was
 * built, whatever the host's version: the host reads what it knows of it). */
struct baton_plugin_desc {
  size_t struct_size;
  uint32_t abi_major, abi_minor; /* the ABI the plugin was built against */
  const char* name;              /* unique among loaded plugins: [a-z0-9_-]+ */
  const char* version;           /* the plugin's own version, free text */
  baton_plugin_kind kind;
  const char* description; /* one line */
  const baton_op_decl* ops;
  size_t op_count;
  const baton_option_decl* options;
  size_t option_count;
  uint32_t flags; /* BATON_PLUGIN_FLAG_* */
  /* Called once after options are known, before any other call but `probe_devices`; for a delegate,
   * only when the delegate is in the chain (a delegate that is not used is never created). Stores the
   * plugin's state. */
  baton_status (*create)(const baton_plugin_host* host, void** plugin_state, baton_error* error);
  /* Called once before unloading; releases plugin_state. */
  void (*destroy)(void* plugin_state);
  /* Delegates only. */
  const baton_delegate_api* delegate;
  /* ABI 1.1, delegates only; NULL or absent (an ABI 1.0 descriptor): one CPU device of preference 0.
   * An ABI 1.0 host never reads it. */
  baton_probe_devices_fn probe_devices;
  /* ABI 1.2, loaders only. */
  const baton_loader_api* loader;
};

/* The entry point. The host passes its ABI version and its function table (valid until unload). The
 * plugin returns its descriptor (static storage, valid until unload), or NULL after writing the reason
 * with api->error_set. It must not call anything else in the table from here. A plugin refuses a host
 * of another major, and a host of its major only when the table lacks something it uses (see "Absent"
 * at the top): a minor version works both ways. */
typedef const baton_plugin_desc* (*baton_plugin_entry_fn)(uint32_t host_abi_major,
                                                          uint32_t host_abi_minor,
                                                          const baton_host_api* api,
                                                          baton_error* error);

/* The enums typed as such inside structs (see the rules at the top) must stay int32-sized. */
#if defined(__cplusplus) && __cplusplus >= 201103L
static_assert(sizeof(baton_plugin_kind) == sizeof(int32_t), "baton_plugin_kind must stay 32 bits");
static_assert(sizeof(baton_option_type) == sizeof(int32_t), "baton_option_type must stay 32 bits");
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
_Static_assert(sizeof(baton_plugin_kind) == sizeof(int32_t), "baton_plugin_kind must stay 32 bits");
_Static_assert(sizeof(baton_option_type) == sizeof(int32_t), "baton_option_type must stay 32 bits");
#endif

/* ---------------------------------------------------------------------------------------------------
 * Versions: what each minor version added, all of it appended (marked "ABI 1.N" where it is declared;
 * what is not marked is ABI 1.0). A plugin that uses an addition tests for it (see "Absent" at the top)
 * and so still loads into an older host of the same major; an older plugin in a newer host never sees it.
 *
 *   1.0  op packs and delegates: the descriptor through `delegate`, kernels, op and option declarations,
 *        delegate calls through partition_free, the host table through partition_output, and the first
 *        18 members of baton_builtin_options.u (conv through squeeze)
 *   1.1  the device probe of delegates: baton_plugin_desc.probe_devices, baton_device
 *   1.2  loaders (BATON_PLUGIN_LOADER, baton_plugin_desc.loader, baton_loader_api,
 *        BATON_PLUGIN_FLAG_ANY_OPTIONS, plugin_path, option_entry, file_exports_symbol); delegates that
 *        select their nodes from the whole graph (select_nodes, selection_free, graph_*,
 *        partition_selection); outputs whose shape depends on the data (tensor_set_dynamic); the options
 *        of MIRROR_PAD, CUMSUM, ONE_HOT, GELU and LOCAL_RESPONSE_NORMALIZATION
 *   1.3  a node's intermediate tensors (node_intermediate_count, node_intermediate); the options of
 *        CONV_3D, CONV_3D_TRANSPOSE, BUCKETIZE, REVERSE_SEQUENCE, FAKE_QUANT, SPARSE_TO_DENSE and of the
 *        recurrent ops (RNN, SVDF, LSTM and their sequence and bidirectional forms)
 *   1.4  objects the plugins of one host share, one thread pool among them (shared_object)
 *   1.5  the options of RANDOM_UNIFORM, RANDOM_STANDARD_NORMAL and MULTINOMIAL (their seeds),
 *        EMBEDDING_LOOKUP_SPARSE and LSH_PROJECTION
 *   1.6  scratch memory of a delegate partition in the host's arena (partition_request_scratch,
 *        partition_scratch)
 *   1.7  string tensors, whose byte size a kernel sets from their contents (tensor_set_byte_size);
 *        SKIP_GRAM's options
 *   1.8  partition inputs a delegate may compute in once it has read them (partition_input_reusable)
 *   1.9  the options of TFLite's second union (BATON_OPTIONS_2_KIND): REDUCE_WINDOW, STABLEHLO_PAD and
 *        STABLEHLO_REDUCE_WINDOW (with the reduction its body subgraph computes)
 *   1.10 op packs claim STABLEHLO_COMPOSITE nodes by the composite's name (BATON_OP_STABLEHLO_COMPOSITE
 *        in baton_op_decl), and see its name and attributes through node_custom_name and
 *        node_custom_options
 *   1.11 delegates claim STABLEHLO_COMPOSITE nodes by name too, and run the whole operation fused
 *   1.12 the options of STABLEHLO_GATHER, STABLEHLO_SCATTER (with the combination its update
 *        computation makes, BATON_WINDOW_REDUCTION_REPLACE for none) and STABLEHLO_RNG_BIT_GENERATOR
 *   1.13 blockwise quantization in baton_quantization (block_size, block_scale_type, block_scale_count,
 *        block_scales)
 *   1.14 scratch memory of an op-pack node in the host's arena (node_request_scratch, node_scratch)
 *   1.15 constants a plugin has copied, whose pages in the model file the host may give back
 *        (tensor_release_constant)
 *   1.16 a reason per node from select_nodes (graph_refuse_node)
 * ------------------------------------------------------------------------------------------------- */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BATON_PLUGIN_API_H */
