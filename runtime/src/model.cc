#include "model.h"

#include "baton/tflite_ops.h"
#include "model_loader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>

#include "tflite_generated.h"

namespace baton {

namespace fb = baton::tflite;

size_t element_size(baton_tensor_type type) { return baton_tensor_type_size(type); }

const char* type_name(baton_tensor_type type) { return baton_tensor_type_name(type); }

std::string shape_text(std::span<const int32_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

const char* builtin_op_name(int32_t op_code) {
  if (op_code < fb::BuiltinOperator_MIN || op_code > fb::BuiltinOperator_MAX) return nullptr;
  const char* name = fb::EnumNameBuiltinOperator(static_cast<fb::BuiltinOperator>(op_code));
  return name && *name ? name : nullptr;
}

std::string op_name(int32_t op_code) {
  if (const char* name = builtin_op_name(op_code)) return name;
  return "UNKNOWN_" + std::to_string(op_code);
}

std::string node_op_name(const NodeInfo& node) {
  return node.op_code == BATON_OP_CUSTOM ? node.custom_name : op_name(node.op_code);
}

bool parse_byte_size(const std::string& text, size_t* bytes) {
  if (text.empty()) return false;
  size_t multiplier = 1;
  std::string digits = text;
  switch (text.back()) {
    case 'K': case 'k': multiplier = size_t(1) << 10; digits.pop_back(); break;
    case 'M': case 'm': multiplier = size_t(1) << 20; digits.pop_back(); break;
    case 'G': case 'g': multiplier = size_t(1) << 30; digits.pop_back(); break;
    default: break;
  }
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 19) return false;
  const unsigned long long v = std::stoull(digits);
  if (v > SIZE_MAX / multiplier) return false;
  *bytes = static_cast<size_t>(v) * multiplier;
  return true;
}

bool parse_byte_limit(const std::string& text, size_t* bytes) {
  if (text == "none" || text == "0") {
    *bytes = SIZE_MAX;
    return true;
  }
  return parse_byte_size(text, bytes) && *bytes > 0;
}

size_t machine_memory_bytes() {
  static const size_t bytes = [] {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    size_t total = pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) : SIZE_MAX;
    // cgroup v2 ("max" when unlimited), then v1 (a huge number when unlimited).
    for (const char* path : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
      std::ifstream in(path);
      unsigned long long limit = 0;
      if (in >> limit && limit > 0 && limit < total) total = static_cast<size_t>(limit);
    }
    return total;
  }();
  return bytes;
}

bool is_runtime_op(int32_t op_code) {
  switch (op_code) {
    case BATON_OP_IF: case BATON_OP_WHILE: case BATON_OP_CALL_ONCE:
    case BATON_OP_STABLEHLO_COMPOSITE:  // its decomposition subgraph
    case BATON_OP_STABLEHLO_CASE:       // one of its branch subgraphs
    case BATON_OP_VAR_HANDLE: case BATON_OP_READ_VARIABLE: case BATON_OP_ASSIGN_VARIABLE:
    case BATON_OP_HASHTABLE: case BATON_OP_HASHTABLE_FIND: case BATON_OP_HASHTABLE_IMPORT:
    case BATON_OP_HASHTABLE_SIZE:
      return true;
    default:
      return false;
  }
}

bool is_random_op(int32_t op_code) {
  return op_code == BATON_OP_RANDOM_STANDARD_NORMAL || op_code == BATON_OP_RANDOM_UNIFORM ||
         op_code == BATON_OP_MULTINOMIAL;
}

bool checked_byte_size(std::span<const int32_t> shape, baton_tensor_type type, size_t* bytes) {
  size_t count = 1;
  for (int32_t d : shape) {
    if (d < 0) return false;
    if (d != 0 && count > std::numeric_limits<size_t>::max() / static_cast<size_t>(d)) return false;
    count *= static_cast<size_t>(d);
  }
  if (type == BATON_TYPE_INT4) {  // two codes a byte, the first in the low nibble
    *bytes = count / 2 + count % 2;
    return true;
  }
  size_t esize = element_size(type);
  if (esize == 0) esize = 1;
  if (count > std::numeric_limits<size_t>::max() / esize) return false;
  *bytes = count * esize;
  return true;
}

Model::~Model() {
  shared_.reset();
  if (mapping_) munmap(mapping_, mapping_size_);
}

void release_constant_pages(const TensorInfo& t) {
  if (!t.is_constant || !t.data_in_mapped_file || t.data.empty()) return;
  static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(t.data.data()) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(t.data.data()) + t.data.size()) / page * page;
  // A private read-only file mapping: the dropped pages are read again from the file when touched.
  if (end > begin) (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

void Model::share_mapping(ShareMapping share) const {
  std::call_once(shared_once_, [this, share] {
    if (!mapping_) return;
    const int fd = ::open(source_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st {};
    if (::fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_dev) != file_device_ ||
        static_cast<uint64_t>(st.st_ino) != file_inode_ || static_cast<size_t>(st.st_size) != mapping_size_) {
      ::close(fd);  // replaced since it was loaded: its constants travel as copies
      return;
    }
    shared_ = share(mapping_, mapping_size_, fd);
  });
}


namespace {

Expected<std::shared_ptr<const Model>> finish(std::shared_ptr<Model> model, const uint8_t* bytes, size_t size,
                                              const LoadLimits& limits);

}  // namespace

Expected<std::shared_ptr<const Model>> load_model_file(const std::string& path, const LoadLimits& limits) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::error(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    return Status::error(path + ": cannot stat: " + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::error(path + ": not a regular file");
  }
  const size_t size = static_cast<size_t>(st.st_size);
  if (size > limits.max_file_bytes) {
    ::close(fd);
    return Status::error(path + ": file is " + std::to_string(size) + " bytes, over the limit of " +
                         std::to_string(limits.max_file_bytes));
  }
  if (size == 0) {
    ::close(fd);
    return Status::error(path + ": file is empty");
  }
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return Status::error(path + ": cannot map: " + std::strerror(errno));
  std::shared_ptr<Model> model(new Model());
  model->source_ = path;
  model->mapping_ = map;
  model->mapping_size_ = size;
  model->file_device_ = static_cast<uint64_t>(st.st_dev);
  model->file_inode_ = static_cast<uint64_t>(st.st_ino);
  auto loaded = finish(std::move(model), static_cast<const uint8_t*>(map), size, limits);
  // The fingerprint read every page of the file. Kernels that keep copies of their weights read them once
  // more (from the page cache) and give them back (release_constant_pages), so the process holds only the
  // pages still in use, not the whole file beside the copies.
  if (loaded) (void)::madvise(map, size, MADV_DONTNEED);
  return loaded;
}

Expected<std::shared_ptr<const Model>> load_model_buffer(std::span<const uint8_t> bytes, const std::string& name,
                                                         const LoadLimits& limits) {
  if (bytes.size() > limits.max_file_bytes) {
    return Status::error(name + ": model is " + std::to_string(bytes.size()) + " bytes, over the limit of " +
                         std::to_string(limits.max_file_bytes));
  }
  std::shared_ptr<Model> model(new Model());
  model->source_ = name;
  model->owned_.assign(bytes.begin(), bytes.end());
  const uint8_t* data = model->owned_.data();
  const size_t size = model->owned_.size();
  return finish(std::move(model), data, size, limits);
}

namespace {

// FNV-1a's step over 8-byte words in four independent lanes, so hashing a model of megabytes costs a
// fraction of a millisecond at load instead of one multiply per byte; the lanes and the tail are folded
// together at the end. Stable across runs and machines of one byte order (the crash journal keys on it).
uint64_t fingerprint_of(const uint8_t* bytes, size_t size) {
  constexpr uint64_t kPrime = 1099511628211ull;
  uint64_t lane[4] = {14695981039346656037ull, 14695981039346656037ull ^ 1, 14695981039346656037ull ^ 2,
                      14695981039346656037ull ^ 3};
  size_t i = 0;
  for (; i + 32 <= size; i += 32) {
    for (int k = 0; k < 4; ++k) {
      uint64_t w;
      std::memcpy(&w, bytes + i + 8 * k, sizeof w);
      lane[k] = (lane[k] ^ w) * kPrime;
    }
  }
  uint64_t h = size;
  for (uint64_t l : lane) h = (h ^ l) * kPrime;
  for (; i < size; ++i) h = (h ^ bytes[i]) * kPrime;
  return h ^ (h >> 32);
}

Expected<std::shared_ptr<const Model>> finish(std::shared_ptr<Model> model, const uint8_t* bytes, size_t size,
                                              const LoadLimits& limits) {
  model->file_size = size;
  model->fingerprint = fingerprint_of(bytes, size);
  if (Status s = read_model(*model, bytes, size, limits); !s) return s;
  return std::shared_ptr<const Model>(std::move(model));
}

}  // namespace

}  // namespace baton
