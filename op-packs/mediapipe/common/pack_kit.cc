#include "common/pack_kit.h"

#include <string>

#include "common/flex_map.h"

namespace baton::packkit {
namespace {

// One pack per module: set once by pack_entry.
const PackInfo* g_info = nullptr;

std::span<const OpDef> ops() { return g_info->ops; }

std::unique_ptr<PackState> create(const baton_host_api&, const baton_plugin_host*, uint32_t) {
  return std::make_unique<PackState>(PackState{g_info->name});  // the ops keep all their state per node
}

baton_status classify(const std::exception& e, std::string& message) {
  if (!dynamic_cast<const FlexError*>(&e)) return BATON_OK;
  message = std::string("custom options: ") + e.what();
  return BATON_INVALID_ARGUMENT;
}

}  // namespace

Quant Ctx::quantization(const baton_tensor* t, const char* role) const {
  const kit::TensorQuant q = quant(t);
  Quant out;
  if (q.count == 0) return out;
  if (q.count != 1) {
    fail(BATON_UNSUPPORTED, std::string(role) + " has per-channel quantization (" + std::to_string(q.count) +
                                " scales); only per-tensor is supported");
  }
  out.scale = q.scale();
  const int64_t zp = q.zero_point();
  require(zp >= -(1 << 16) && zp <= (1 << 16), std::string(role) + " zero point " + std::to_string(zp) + " out of range");
  out.zero_point = static_cast<int32_t>(zp);
  require(out.scale > 0, std::string(role) + " quantization scale must be positive");
  return out;
}

const baton_plugin_desc* pack_entry(const PackInfo& info, uint32_t host_abi_major, uint32_t host_abi_minor,
                                    const baton_host_api* api, baton_error* error) {
  g_info = &info;
  static const kit::OpPack<Ctx, PackState> pack = {
      info.name, info.version, info.description, ops, {},
      BATON_PLUGIN_FLAG_REENTRANT,  // no shared mutable state: every op keeps its buffers per node
      create,    classify,
  };
  return kit::OpPackBoundary<Ctx, PackState>::entry(pack, host_abi_major, host_abi_minor, api, error);
}

}  // namespace baton::packkit
