// Parking an op pack or a delegate that no model of its environment uses (plugin_registry.h): destroyed and
// its library unloaded while no subgraph holds it, loaded and created again when one does. A process that
// loads only MoveNet keeps no page of the mediapipe and detection packs' code mapped, nor the cpu
// delegate's, which takes none of its nodes (about 0.6 MB of resident memory), and a vendor's pack or
// delegate for other models costs nothing.
#include <string>
#include <vector>

#include "plugin_registry.h"

namespace baton {

void LoadedPlugin::park() {
  std::lock_guard<std::mutex> guard(lifecycle_);
  // A delegate whose devices were never asked keeps its probe for the reports.
  const bool parks = kind == BATON_PLUGIN_OP_PACK || (kind == BATON_PLUGIN_DELEGATE && probed_);
  if (!parks || parked() || users_ > 0 || !created || isolated || !loaded_by.empty() || asked_shared ||
      !library.is_loaded()) {
    return;
  }
  release();
  state = nullptr;
  forget_functions();
  library.unload();
  parked_.store(true, std::memory_order_relaxed);
  if (log) {
    log(BATON_LOG_DEBUG, (kind == BATON_PLUGIN_OP_PACK ? "op pack " : "delegate ") + name +
                             " parked: no model of this environment uses it now");
  }
}

Status LoadedPlugin::acquire() {
  std::lock_guard<std::mutex> guard(lifecycle_);
  if (parked()) {
    if (Status s = reload_locked(); !s) return s;
  }
  ++users_;
  return Status::ok();
}

void LoadedPlugin::release_use() {
  std::lock_guard<std::mutex> guard(lifecycle_);
  if (users_ > 0) --users_;
}

Status LoadedPlugin::reload_locked() {
  const std::string what = (kind == BATON_PLUGIN_OP_PACK ? "op pack " : "delegate ") + name + " (" + path +
                           ") could not be loaded again: ";
  if (std::string why; !library.load(path, &why)) return Status::error(what + why);
  auto fail = [&](const std::string& why) {
    library.unload();
    return Status::error(what + why);
  };
  if (!library.has(BATON_PLUGIN_ENTRY_SYMBOL)) return fail("no entry symbol '" BATON_PLUGIN_ENTRY_SYMBOL "'");
  std::string why;
  const baton_plugin_desc* desc = call_plugin_entry(library, &why);
  if (!desc) return fail(why);
  if (!BATON_STRUCT_HAS(desc, baton_plugin_desc, destroy)) return fail("its descriptor is too small");
  // The same file gives the same declarations: anything else is a different plugin now.
  const baton_plugin_desc d = copy_sized<baton_plugin_desc>(desc, desc->struct_size);
  const std::string changed = "the file no longer declares what it did when first loaded";
  if (d.kind != kind || !d.name || name != d.name || d.op_count != ops.size() || (d.op_count && !d.ops)) {
    return fail(changed);
  }
  const bool pack = kind == BATON_PLUGIN_OP_PACK;
  const auto* op_bytes = reinterpret_cast<const uint8_t*>(d.ops);
  const size_t op_stride = d.op_count ? d.ops[0].struct_size : 0;
  if (pack && d.op_count && !BATON_STRUCT_HAS(&d.ops[0], baton_op_decl, kernel)) return fail(changed);
  std::vector<baton_kernel> kernels;
  kernels.reserve(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const baton_op_decl o = copy_sized<baton_op_decl>(op_bytes + i * op_stride, op_stride);
    const bool named = o.builtin_code == BATON_OP_CUSTOM || o.builtin_code == BATON_OP_STABLEHLO_COMPOSITE;
    if (o.builtin_code != ops[i].code || o.min_version != ops[i].min_version || o.max_version != ops[i].max_version ||
        (named && (!o.custom_name || ops[i].custom_name != o.custom_name))) {
      return fail(changed);
    }
    if (!pack) continue;  // a delegate's declarations carry no kernels
    if (!o.kernel || !BATON_STRUCT_HAS(o.kernel, baton_kernel, invoke)) return fail(changed);
    kernels.push_back(copy_sized<baton_kernel>(o.kernel, o.kernel->struct_size));
    if (!kernels.back().prepare || !kernels.back().invoke) return fail(changed);
  }
  if (!pack) {
    if (!BATON_STRUCT_HAS(&d, baton_plugin_desc, delegate) || !d.delegate) return fail(changed);
    const baton_delegate_api api = copy_sized<baton_delegate_api>(d.delegate, d.delegate->struct_size);
    if ((!api.check_node && !api.select_nodes) || !api.partition_init || !api.partition_invoke ||
        (api.select_nodes != nullptr) != selects_nodes_) {
      return fail(changed);
    }
    delegate = api;
    probe_fn = BATON_STRUCT_HAS(&d, baton_plugin_desc, probe_devices) ? d.probe_devices : nullptr;
  }
  for (size_t i = 0; i < kernels.size(); ++i) ops[i].kernel = kernels[i];
  create_fn = d.create;
  destroy_fn = d.destroy;
  create_tried_ = false;
  create_error_.clear();
  if (Status s = create_locked(); !s) {
    for (OpDecl& op : ops) op.kernel = baton_kernel{};
    delegate = baton_delegate_api{};
    probe_fn = nullptr;
    create_fn = nullptr;
    destroy_fn = nullptr;
    return fail(s.message());
  }
  parked_.store(false, std::memory_order_relaxed);
  if (log) log(BATON_LOG_DEBUG, (kind == BATON_PLUGIN_OP_PACK ? "op pack " : "delegate ") + name + " loaded again: a model uses it");
  return Status::ok();
}

}  // namespace baton
