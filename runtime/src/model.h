// Model loading: maps a .tflite file read-only, runs the flatbuffers verifier, then checks what the
// verifier cannot (indices in range, buffers large enough for their shapes, sizes without overflow,
// execution order without cycles, known op codes) and turns the flatbuffer into plain values the later
// stages read. Constant tensor data stays in the mapping; nothing is copied except the rare constant
// whose bytes are misaligned for its element type.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "baton/plugin_api.h"
#include "status.h"

namespace baton {

struct Quantization {
  std::vector<float> scales;
  std::vector<int64_t> zero_points;  // empty: all zero
  int32_t quantized_dimension = 0;
  // Blockwise (BlockwiseQuantization): block_size > 0, scales empty; each run of block_size elements along
  // the last dimension has a scale in the constant tensor block_scales_tensor of the same subgraph, whose
  // type and data load keeps here.
  int32_t block_size = 0;
  int32_t block_scales_tensor = -1;
  baton_tensor_type block_scale_type = BATON_TYPE_FLOAT32;
  std::span<const uint8_t> block_scales;
  bool empty() const { return scales.empty(); }  // no per-tensor or per-channel scales (blockwise may hold)
  bool blockwise() const { return block_size > 0; }
};

// Sparse storage of a constant (TFLite's SparsityParameters), kept for DENSIFY.
struct Sparsity {
  struct Dimension {
    bool sparse = false;  // SPARSE_CSR when true, DENSE otherwise
    int32_t dense_size = 0;
    std::vector<int32_t> segments;  // CSR only
    std::vector<int32_t> indices;   // CSR only
  };
  std::vector<int32_t> traversal_order;
  std::vector<int32_t> block_map;
  std::vector<Dimension> dims;
};

struct TensorInfo {
  int32_t index = 0;
  std::string name;
  baton_tensor_type type = BATON_TYPE_FLOAT32;
  std::vector<int32_t> shape;
  std::vector<int32_t> shape_signature;  // -1 marks a dynamic dimension
  std::span<const uint8_t> data;         // constant data; empty for activations
  bool data_in_mapped_file = false;      // `data` lies in the model's file mapping (release_constant_pages)
  bool is_constant = false;
  bool is_variable = false;
  Quantization quant;
  std::shared_ptr<const Sparsity> sparsity;  // null for dense tensors
};

struct NodeInfo {
  int32_t index = 0;
  int32_t op_code = 0;  // the larger of the two op-code fields
  std::string custom_name;
  int32_t version = 1;
  std::vector<int32_t> inputs;  // -1 for an omitted optional input
  std::vector<int32_t> outputs;
  // Tensors that carry only a quantization a kernel computes with (Operator.intermediates).
  std::vector<int32_t> intermediates;
  baton_builtin_options options{};
  std::span<const uint8_t> custom_options;
  // The subgraphs a control-flow node runs: WHILE {cond, body}, IF {then, else}, CALL_ONCE {init},
  // STABLEHLO_COMPOSITE {decomposition}, STABLEHLO_CASE its branches in order; each exists (load checks).
  std::vector<int32_t> callees;
  // STABLEHLO_COMPOSITE: the operation's name ("odml.scaled_dot_product_attention", ...), its attributes (a
  // flexbuffer map, in the model's buffer) and version.
  std::string composite_name;
  std::span<const uint8_t> composite_attributes;
  int32_t composite_version = 0;
  // VAR_HANDLE: the variable's name.
  std::string var_container, var_shared_name;
  // HASHTABLE: the table's id and the types of its keys and values.
  int32_t table_id = 0;
  baton_tensor_type table_key_type = BATON_TYPE_FLOAT32, table_value_type = BATON_TYPE_FLOAT32;
};

struct SubgraphInfo {
  std::string name;
  std::vector<TensorInfo> tensors;
  std::vector<NodeInfo> nodes;
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;
};

struct SignatureInfo {
  std::string key;
  int32_t subgraph = 0;
  std::vector<std::pair<std::string, int32_t>> inputs;   // name, tensor index
  std::vector<std::pair<std::string, int32_t>> outputs;  // name, tensor index
};

struct MetadataInfo {
  std::string name;
  std::span<const uint8_t> data;
};

// The memory this process may use: the machine's physical memory, or its cgroup's memory.max when that
// is lower (a container). Read once.
size_t machine_memory_bytes();

// What a host accepts from an untrusted model. Each is checked before anything of that size is
// allocated; going over is an error that names the file, tensor or arena and the size. The defaults come
// from the machine: no single tensor (a constant is also bounded by its file) and no arena larger than
// the memory there is, so a model that declares a huge dimension is refused at once instead of making
// the machine swap. SIZE_MAX turns a limit off.
struct LoadLimits {
  // flatbuffers cannot address more than 2 GiB
  size_t max_file_bytes = std::min(size_t(1) << 31, machine_memory_bytes());
  size_t max_tensor_bytes = machine_memory_bytes();  // any single tensor, constant or not
  size_t max_arena_bytes = machine_memory_bytes();   // the planned arena of an interpreter
};

// Parses a byte count with an optional K, M or G suffix (powers of 1024): "512M". False on bad text.
bool parse_byte_size(const std::string& text, size_t* bytes);
// A limit as the config and the command line give it: a byte count as parse_byte_size reads it, or
// "none" or "0" for no limit (SIZE_MAX). False on bad text.
bool parse_byte_limit(const std::string& text, size_t* bytes);

// Gives back to the system the pages that lie wholly inside a constant tensor's data when that data is in
// the model's file mapping: they stay readable (a later read maps them again from the file). A no-op for
// any other tensor. What tensor_release_constant (ABI 1.15) does for a plugin that has copied a constant.
void release_constant_pages(const TensorInfo& t);

class Model {
 public:
  uint32_t schema_version = 0;
  std::string description;
  std::string min_runtime_version;  // from the "min_runtime_version" metadata, if any
  std::vector<MetadataInfo> metadata;
  std::vector<SubgraphInfo> subgraphs;
  std::vector<SignatureInfo> signatures;
  size_t file_size = 0;
  size_t constant_bytes = 0;
  uint64_t fingerprint = 0;  // a hash of the file's bytes (fingerprint_of in model.cc): names the model in the crash journal

  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const SubgraphInfo& main() const { return subgraphs.front(); }
  // The source name given at load (a path, or "<buffer>").
  const std::string& source() const { return source_; }
  // The file's mapping (its first byte), or null for a model loaded from a buffer.
  const void* mapped_bytes() const { return mapping_; }
  // Hands the mapped file to `share` once (its address, size and a descriptor of the same file, opened
  // again and checked to be the one that was mapped; `share` owns the descriptor) and keeps what `share`
  // returns until the mapping goes: how the environment lets a plugin in a child process map the constants instead of receiving
  // copies (Environment::share_model). Thread-safe; a no-op for a model loaded from a buffer, and when the
  // file was replaced since it was loaded.
  using ShareMapping = std::shared_ptr<void> (*)(const void* base, size_t size, int fd);
  void share_mapping(ShareMapping share) const;

 private:
  friend class ModelLoader;
  friend Expected<std::shared_ptr<const Model>> load_model_file(const std::string&, const LoadLimits&);
  friend Expected<std::shared_ptr<const Model>> load_model_buffer(std::span<const uint8_t>, const std::string&,
                                                                  const LoadLimits&);
  Model() = default;
  std::string source_;
  void* mapping_ = nullptr;  // mmap of the file, or null
  size_t mapping_size_ = 0;
  uint64_t file_device_ = 0, file_inode_ = 0;
  mutable std::once_flag shared_once_;
  mutable std::shared_ptr<void> shared_;  // what share_mapping's `share` returned, released before munmap
  std::vector<uint8_t> owned_;                       // copy of a buffer given by the caller
  std::vector<std::unique_ptr<uint8_t[]>> realigned_;  // constants whose bytes were misaligned
};

// Loads and checks a model. The error names the file and what is wrong.
Expected<std::shared_ptr<const Model>> load_model_file(const std::string& path,
                                                       const LoadLimits& limits = {});
// Same for bytes in memory; they are copied, so the caller's buffer may go away.
Expected<std::shared_ptr<const Model>> load_model_buffer(std::span<const uint8_t> bytes,
                                                         const std::string& name = "<buffer>",
                                                         const LoadLimits& limits = {});

// Control flow (WHILE, IF, CALL_ONCE) and resource variables (VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE):
// nodes the runtime runs itself; never folded, never offered to plugins.
bool is_runtime_op(int32_t op_code);

// RANDOM_UNIFORM, RANDOM_STANDARD_NORMAL and MULTINOMIAL: builtin ops whose outputs are not a function of
// their inputs (each invoke draws new numbers from the node's generator), so never folded, and a model
// with one is not run twice for one invoke.
bool is_random_op(int32_t op_code);

// Bytes of one element, 0 for types without a fixed size (strings, resources).
size_t element_size(baton_tensor_type type);
const char* type_name(baton_tensor_type type);
// A shape as messages show it: [1,224,224,3].
std::string shape_text(std::span<const int32_t> shape);
// The name a plugin declares a node's op by: a custom op's, a STABLEHLO_COMPOSITE's composite name; ""
// for the other builtin ops.
inline const std::string& claim_name(const NodeInfo& n) {
  return n.op_code == BATON_OP_STABLEHLO_COMPOSITE ? n.composite_name : n.custom_name;
}
// TFLite's name of a builtin op code ("CONV_2D"), or "UNKNOWN_<n>".
std::string op_name(int32_t op_code);
// The same, static, or null for a code the schema does not name.
const char* builtin_op_name(int32_t op_code);
// "CONV_2D" or the custom op's name.
std::string node_op_name(const NodeInfo& node);
// Element count * element size, or nullopt on overflow or a negative dimension.
bool checked_byte_size(std::span<const int32_t> shape, baton_tensor_type type, size_t* bytes);

}  // namespace baton
