/*
 * baton's C API for applications: load plugins once into an environment, create interpreters of
 * models in it, feed inputs, invoke, read outputs.
 *
 * Ownership: every *_create returns an object the caller owns and releases with the matching
 * *_destroy. Tensors returned by an interpreter are borrowed from it: valid until the interpreter is
 * destroyed; their data pointers are valid until the next resize of an input. An environment must
 * outlive the interpreters created in it.
 *
 * Errors: functions that create return NULL on failure, and baton_last_error() then gives the reason
 * (per thread). Functions on an interpreter return a baton_status and keep the reason for
 * baton_interpreter_last_error().
 *
 * Threads: one interpreter is used by one thread at a time; different interpreters, in the same
 * environment or not, may run in different threads at once.
 */
#ifndef BATON_C_API_H
#define BATON_C_API_H

#include <stddef.h>
#include <stdint.h>

#include "baton/plugin_api.h" /* baton_status, baton_tensor_type, baton_tensor */
#include "baton/tflite_ops.h"  /* BATON_OP_*, TFLite's op codes (baton_model_node) */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct baton_environment baton_environment;
typedef struct baton_interpreter baton_interpreter;

/* A delegate object of another runtime's API that the application hands over in-process, for the loader
 * plugin that wraps objects of its `kind` ("TfLiteDelegate": the tflite-delegates loader) to make a delegate
 * of: it takes `name` and goes first in the delegate chain, in the order given. The object must outlive
 * the environment. */
typedef struct baton_foreign_delegate {
  const char* kind;
  void* object;
  const char* name;
} baton_foreign_delegate;

typedef struct baton_environment_options {
  size_t struct_size;               /* sizeof(baton_environment_options) */
  const char* config_path;          /* NULL: $BATON_CONFIG, then the usual places */
  const char* const* plugin_dirs;   /* searched first, in order */
  size_t plugin_dir_count;
  const char* const* delegates;     /* replaces the configured delegate order when delegate_count > 0 */
  size_t delegate_count;
  int32_t no_delegates;             /* non-zero: op packs only */
  int32_t threads;                  /* 0: the config's value, else all cores */
  int32_t verbose;                  /* non-zero: info messages on stderr */
  int32_t no_default_dirs;          /* non-zero: skip the install and build-tree plugin folders */
  /* Limits on untrusted models (0: the config's, else the defaults: the machine's memory for a tensor
   * and for the arena, 2 GiB or less for the file; SIZE_MAX: no limit). Going over is an error naming
   * the file, tensor or arena and the size, before anything that size is allocated. */
  size_t max_model_bytes;
  size_t max_tensor_bytes;
  size_t max_arena_bytes;
  /* Plugins to run in a process of their own (baton-plugin-host), by name, so that a crash or hang in
   * them falls back instead of taking the application down; isolate_all non-zero: every plugin. The
   * config's `isolation` keys add to these. */
  const char* const* isolate;
  size_t isolate_count;
  int32_t isolate_all;
  /* Where baton's messages go instead of stderr (NULL: stderr, info messages only with `verbose`): every
   * message of every level, from any thread, possibly from several at once; `message` is borrowed for the
   * call. A Python binding sends them to its logging module. */
  void (*log)(void* user_data, baton_log_level level, const char* message);
  void* log_user_data;
  const baton_foreign_delegate* foreign_delegates;
  size_t foreign_delegate_count;
} baton_environment_options;

/* Returns the reason the last failed call on this thread failed ("" if none). Borrowed until the next
 * call on this thread. */
const char* baton_last_error(void);

/* The config file an environment created with this config_path would read: config_path itself (NULL or
 * "": none given), else $BATON_CONFIG, else $XDG_CONFIG_HOME/baton/baton.conf, else
 * /etc/baton/baton.conf; "" when there is none. NULL when config_path or $BATON_CONFIG names a file that
 * does not exist (baton_last_error() says which). Borrowed until the next call on this thread. For
 * programs that keep keys of their own in it (baton serve's [serve] section). */
const char* baton_config_file(const char* config_path);

/* Reads a byte count as the limits above and the config's max-*-bytes keys take it: digits with an
 * optional K, M or G (powers of 1024), or "none" or "0" for no limit (SIZE_MAX). Returns non-zero and
 * sets *bytes when `text` is one; 0 (and *bytes untouched) otherwise. */
int32_t baton_parse_byte_limit(const char* text, size_t* bytes);

/* options may be NULL for all defaults. */
baton_environment* baton_environment_create(const baton_environment_options* options);
void baton_environment_destroy(baton_environment* env);

/* The plugins the environment loaded (delegates and op packs, each once, in the order they were
 * found), and how many times each one's own process died or was killed (a crash, a hang past its
 * timeout) under the environment's interpreters since the environment was created, for a server's
 * metrics. Only a plugin run in a process of its own (isolate) can die and leave the application
 * running, so the others count 0. Thread-safe. The name is borrowed for the environment's lifetime;
 * NULL (and 0 deaths) when i is out of range. */
int32_t baton_environment_plugin_count(const baton_environment* env);
const char* baton_environment_plugin_name(const baton_environment* env, int32_t i);
uint64_t baton_environment_plugin_deaths(const baton_environment* env, int32_t i);

/* The forms of the reports below and of baton_interpreter_plan. */
typedef enum baton_plan_format {
  BATON_PLAN_SUMMARY = 0,
  BATON_PLAN_TEXT = 1,
  BATON_PLAN_JSON = 2,
  BATON_PLAN_DOT = 3,
} baton_plan_format;

/* What the environment loaded, as `baton plugins` prints it: the config, the plugin folders, each plugin
 * (kind, ABI version, path, isolation, ops, devices, options and their values), the delegate chain and
 * why each delegate holds its place, which op pack wins an op several declare, the files skipped and why.
 * `format` is BATON_PLAN_TEXT or BATON_PLAN_JSON (the fields `baton plugins --json` documents; fields are
 * only ever added). Borrowed until the next call of this function on this thread; NULL for another
 * format (baton_last_error() says so). */
const char* baton_environment_report(const baton_environment* env, baton_plan_format format);
/* What the model at `path` contains, as `baton inspect` prints it, read without any plugin: inputs and
 * outputs with their quantization, subgraphs and what runs them, signatures, op counts, constants, what
 * load folds or drops, metadata. `format` as above (`baton inspect --json`'s fields). NULL when the file
 * cannot be read as a model or for another format (baton_last_error() says why); borrowed until the next
 * call of this function on this thread. */
const char* baton_model_report(const char* path, baton_plan_format format);

baton_interpreter* baton_interpreter_create_from_file(baton_environment* env, const char* path);
/* A model loaded once, read-only, that any number of interpreters (in any environment, in any thread) run
 * without copying it: checked against `env`'s limits at load as baton_interpreter_create_from_file checks
 * it. Each interpreter keeps what it needs, so the model may be destroyed before them. */
typedef struct baton_model baton_model;
baton_model* baton_model_create_from_file(const baton_environment* env, const char* path);
/* The bytes are copied. */
baton_model* baton_model_create_from_buffer(const baton_environment* env, const void* data, size_t size);
void baton_model_destroy(baton_model* model);
/* The model's signatures (SignatureDef): key and subgraph, and each one's inputs or outputs (`outputs`
 * non-zero) in the model's order, by name and tensor index in that subgraph. Strings are borrowed for the
 * model's lifetime; NULL or -1 when an index is out of range. */
int32_t baton_model_signature_count(const baton_model* model);
const char* baton_model_signature_key(const baton_model* model, int32_t i);
int32_t baton_model_signature_subgraph(const baton_model* model, int32_t i);
int32_t baton_model_signature_tensor_count(const baton_model* model, int32_t i, int32_t outputs);
const char* baton_model_signature_tensor_name(const baton_model* model, int32_t i, int32_t outputs, int32_t k);
int32_t baton_model_signature_tensor_index(const baton_model* model, int32_t i, int32_t outputs, int32_t k);

/* The model's nodes, subgraph by subgraph, as the file gives them (before any folding): what a tool needs
 * to tell which plugin could run them. The caller sets struct_size; strings are borrowed for the model's
 * lifetime. */
typedef struct baton_model_node {
  size_t struct_size;  /* sizeof(baton_model_node), set by the caller */
  const char* op;      /* TFLite's op name ("CONV_2D"), or a custom op's or a composite's own name */
  int32_t op_code;     /* BATON_OP_* (tflite_ops.h): BATON_OP_CUSTOM or BATON_OP_STABLEHLO_COMPOSITE for those */
  int32_t version;
  int32_t type;        /* the baton_tensor_type of its first present input, else of its first output; -1: none */
  int32_t runtime;     /* non-zero: the runtime runs it itself (control flow, resource variables, hash tables) */
  int32_t stateful;    /* non-zero: its outputs depend on earlier invokes or on chance (it reads a variable
                        * tensor, or it is a random op or a resource variable's) */
} baton_model_node;
int32_t baton_model_subgraph_count(const baton_model* model);
/* -1 when subgraph is out of range. */
int32_t baton_model_node_count(const baton_model* model, int32_t subgraph);
/* BATON_INVALID_ARGUMENT when subgraph or node is out of range or out is NULL. */
baton_status baton_model_get_node(const baton_model* model, int32_t subgraph, int32_t node, baton_model_node* out);

/* Runs the subgraph of the model's signature `signature_key` instead of subgraph 0; its inputs and
 * outputs, in the subgraph's order, are the interpreter's, and the signature's names find them. */
baton_interpreter* baton_interpreter_create_for_signature(baton_environment* env, const char* path,
                                                          const char* signature_key);
/* The bytes are copied; the caller may free them after the call. */
baton_interpreter* baton_interpreter_create_from_buffer(baton_environment* env, const void* data, size_t size);

/* What an interpreter may be asked beyond its model and environment. The caller sets struct_size; the
 * fields past it (an application built against older headers) read as zero and NULL. */
typedef struct baton_interpreter_options {
  size_t struct_size;        /* sizeof(baton_interpreter_options), set by the caller */
  const char* signature_key; /* NULL or "": subgraph 0; else as baton_interpreter_create_for_signature */
  int32_t strict;            /* non-zero: creation fails when a node would run on an op pack instead of a
                              * delegate (the config's `strict = true` asks the same of every interpreter) */
} baton_interpreter_options;
/* As baton_interpreter_create_from_file with `options` (NULL: none). */
baton_interpreter* baton_interpreter_create_with_options(baton_environment* env, const char* path,
                                                         const baton_interpreter_options* options);
/* An interpreter of a model loaded with baton_model_create_*, with `options` (NULL: none). */
baton_interpreter* baton_interpreter_create_from_model(baton_environment* env, const baton_model* model,
                                                       const baton_interpreter_options* options);

/* The delegate chain, in the order delegates are offered nodes; the name is borrowed for the environment's
 * lifetime, NULL when i is out of range. */
int32_t baton_environment_delegate_count(const baton_environment* env);
const char* baton_environment_delegate_name(const baton_environment* env, int32_t i);

/* The thread count plugins run with unless their own section sets one: the environment's `threads`,
 * else the config's, else the machine's cores. */
int32_t baton_environment_threads(const baton_environment* env);
void baton_interpreter_destroy(baton_interpreter* interp);

int32_t baton_interpreter_input_count(const baton_interpreter* interp);
int32_t baton_interpreter_output_count(const baton_interpreter* interp);
/* Index of the input/output with this tensor or signature name, or -1. */
int32_t baton_interpreter_input_index(const baton_interpreter* interp, const char* name);
int32_t baton_interpreter_output_index(const baton_interpreter* interp, const char* name);
/* NULL when i is out of range. */
const baton_tensor* baton_interpreter_input(const baton_interpreter* interp, int32_t i);
const baton_tensor* baton_interpreter_output(const baton_interpreter* interp, int32_t i);

baton_status baton_interpreter_resize_input(baton_interpreter* interp, int32_t i, int32_t rank, const int32_t* dims);
/* Prepares and plans memory now for the shapes resizes asked for (invoke does it otherwise), so that tensor
 * memory can be read or written before the next invoke. */
baton_status baton_interpreter_allocate_tensors(baton_interpreter* interp);
/* The subgraph the interpreter runs (0, or its signature's). */
int32_t baton_interpreter_entry_subgraph(const baton_interpreter* interp);
/* Every tensor of that subgraph by its index in the model (inputs, outputs, constants, intermediates); NULL
 * when out of range. Borrowed from the interpreter. */
int32_t baton_interpreter_tensor_count(const baton_interpreter* interp);
const baton_tensor* baton_interpreter_tensor(const baton_interpreter* interp, int32_t index);
/* The memory of tensor `index`, to write (an input before invoke) or read in place: NULL for a constant,
 * for a tensor without memory now (inside a delegate's partition, or after a resize until
 * allocate_tensors or invoke) and out of range. Valid until the next resize, allocate_tensors or invoke. */
void* baton_interpreter_tensor_data(baton_interpreter* interp, int32_t index);
/* Copies `size` bytes into input i; size must equal the input's byte size. A string input
 * (BATON_TYPE_STRING) takes TFLite's packed string buffer (an int32 count, count + 1 int32 offsets, the
 * bytes; baton/string_tensor.hpp writes one) of as many strings as the input's shape has elements, of any
 * size; resizing the input drops its value. */
baton_status baton_interpreter_set_input(baton_interpreter* interp, int32_t i, const void* data, size_t size);
baton_status baton_interpreter_invoke(baton_interpreter* interp);
/* Stops a running baton_interpreter_invoke of `interp` at its next step: that invoke then fails with
 * "invoke cancelled" (outputs incomplete). The one call that may be made from another thread while the
 * interpreter is used, and from a signal handler. Cancels nothing when no invoke runs. */
void baton_interpreter_cancel(baton_interpreter* interp);
/* Returns the model's variables to their initial values: variable tensors to zero, resource variables
 * unset (the CALL_ONCE nodes that initialise them run again on the next invoke). */
void baton_interpreter_reset_variables(baton_interpreter* interp);
/* Copies output i into `data`; size must equal the output's byte size (a string output's, in the packed
 * layout, is known after invoke: baton_tensor_get_byte_size). */
baton_status baton_interpreter_get_output(const baton_interpreter* interp, int32_t i, void* data, size_t size);
/* Borrowed until the next call on this interpreter. */
const char* baton_interpreter_last_error(const baton_interpreter* interp);

/* What the interpreter decided, as `baton plan` prints it: which plugin runs each node and why the
 * delegates before it did not, the partitions, the fallbacks. BATON_PLAN_SUMMARY is one line
 * ("xnnpack: 162 of 164 nodes in 1 partition; builtin: 2 nodes"), BATON_PLAN_TEXT the table,
 * BATON_PLAN_JSON the report whose fields `baton plan --format json` documents (fields are only ever
 * added), BATON_PLAN_DOT a Graphviz graph. Borrowed until the next call of this function on the
 * interpreter or its destruction; NULL for an unknown format. */
const char* baton_interpreter_plan(baton_interpreter* interp, baton_plan_format format);

/* Where node `node` of the entry subgraph runs. The caller sets struct_size; strings are borrowed for
 * the interpreter's lifetime. */
typedef struct baton_node_placement {
  size_t struct_size;  /* sizeof(baton_node_placement), set by the caller */
  const char* op;      /* "CONV_2D v2", "custom Atan v1" */
  const char* kind;    /* "delegate", "op-pack", "runtime", "folded" or "dropped" */
  const char* plugin;  /* the plugin's name ("runtime" for the runtime's own nodes) */
  int32_t partition;   /* the delegate's partition, else -1 */
} baton_node_placement;
int32_t baton_interpreter_node_count(const baton_interpreter* interp);
/* BATON_INVALID_ARGUMENT when node is out of range or out is NULL. */
baton_status baton_interpreter_node_placement(const baton_interpreter* interp, int32_t node,
                                              baton_node_placement* out);

/* Profiling of the entry subgraph's steps (a step: a node the host runs, an op pack's node, or a delegate's
 * whole partition, in execution order). With profiling on, each invoke adds each step's wall time to it (a
 * control-flow node's time includes the subgraphs it runs); turning it on or off zeroes the times. */
void baton_interpreter_set_profiling(baton_interpreter* interp, int32_t on);
int32_t baton_interpreter_step_count(const baton_interpreter* interp);
typedef struct baton_step_profile {
  size_t struct_size;  /* sizeof(baton_step_profile), set by the caller */
  const char* op;      /* a node's op ("CONV_2D"), or "partition N" for a delegate's partition */
  const char* plugin;  /* the op pack or delegate that runs it ("runtime" for the runtime's own nodes) */
  int32_t node;        /* the node's index in the entry subgraph, -1 for a partition */
  double seconds;      /* wall time summed over the invokes since profiling was turned on */
} baton_step_profile;
/* BATON_INVALID_ARGUMENT when step is out of range or out is NULL. Strings are borrowed for the
 * interpreter's lifetime. */
baton_status baton_interpreter_step_profile(const baton_interpreter* interp, int32_t step, baton_step_profile* out);

/* What the interpreter holds, summed over the subgraphs that run. The caller sets struct_size. */
typedef struct baton_interpreter_memory {
  size_t struct_size;   /* sizeof(baton_interpreter_memory), set by the caller */
  size_t arena_bytes;   /* the one block of the non-constant tensors (and delegates' scratch) */
  size_t naive_bytes;   /* what those tensors would take without sharing memory */
  size_t folded_nodes;  /* nodes computed once at load (their inputs were all constant) */
  size_t folded_bytes;  /* the constants those nodes made */
  size_t dropped_nodes; /* dead nodes removed at load (nothing reads their outputs) */
} baton_interpreter_memory;
baton_status baton_interpreter_memory_info(const baton_interpreter* interp, baton_interpreter_memory* out);

/* Tensor accessors for applications. */
const char* baton_tensor_get_name(const baton_tensor* tensor);
baton_tensor_type baton_tensor_get_type(const baton_tensor* tensor);
int32_t baton_tensor_get_rank(const baton_tensor* tensor);
int32_t baton_tensor_get_dim(const baton_tensor* tensor, int32_t i);
size_t baton_tensor_get_byte_size(const baton_tensor* tensor);
/* The size the model declares for dimension i of an input or output: -1 where the model marks the
 * dimension dynamic (TFLite's shape_signature), otherwise the model's own size, whatever the tensor was
 * resized to since. -1 too when i is out of range; baton_tensor_get_rank gives the rank. */
int32_t baton_tensor_get_signature_dim(const baton_tensor* tensor, int32_t i);
/* The rank of the shape signature the model gives the tensor; 0 when it gives none (every dimension is
 * then fixed, and tf.lite reports the current shape as the signature). */
int32_t baton_tensor_get_signature_rank(const baton_tensor* tensor);

/* The tensor's index in its subgraph. */
int32_t baton_tensor_get_index(const baton_tensor* tensor);
/* Its values: a constant's data, else its memory now (NULL when it has none; see
 * baton_interpreter_tensor_data). */
const void* baton_tensor_get_data(const baton_tensor* tensor);
int32_t baton_tensor_is_constant(const baton_tensor* tensor);
/* A tensor whose shape is known only at invoke: its shape and memory change during invoke. */
int32_t baton_tensor_is_dynamic(const baton_tensor* tensor);
/* A variable tensor (TFLite's is_variable: state an op keeps across invokes). */
int32_t baton_tensor_is_variable(const baton_tensor* tensor);
/* Its quantization as the model gives it (zeros when none; arrays borrowed from the model; zero_points NULL
 * when all are zero). The caller sets out->struct_size; no more than that is written. */
void baton_tensor_get_quantization(const baton_tensor* tensor, baton_quantization* out);

/* A tensor the model stores sparse (TFLite's SparsityParameters; baton densifies it at load): the
 * traversal order, the block map and the number of dimensions; each dimension by
 * baton_tensor_get_sparsity_dimension. Arrays are borrowed from the model. The caller sets struct_size. */
typedef struct baton_sparsity {
  size_t struct_size; /* sizeof(baton_sparsity), set by the caller */
  int32_t traversal_order_count;
  const int32_t* traversal_order;
  int32_t block_map_count;
  const int32_t* block_map;
  int32_t dimension_count;
} baton_sparsity;
typedef struct baton_sparsity_dimension {
  size_t struct_size;  /* sizeof(baton_sparsity_dimension), set by the caller */
  int32_t sparse;      /* non-zero: SPARSE_CSR (segments, indices); zero: DENSE (dense_size) */
  int32_t dense_size;
  int32_t segment_count;
  const int32_t* segments;
  int32_t index_count;
  const int32_t* indices;
} baton_sparsity_dimension;
/* 1 (and `out` filled) for a sparse tensor, 0 for a dense one or a NULL argument. */
int32_t baton_tensor_get_sparsity(const baton_tensor* tensor, baton_sparsity* out);
/* 1 (and `out` filled) when the tensor is sparse and d names one of its dimensions, else 0. */
int32_t baton_tensor_get_sparsity_dimension(const baton_tensor* tensor, int32_t d, baton_sparsity_dimension* out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BATON_C_API_H */
