// `baton plugins`' report (baton_environment_report): what was loaded from where, what each plugin offers,
// the delegate chain and why, and what was skipped and why.
#include "plugins_report.h"

#include <algorithm>
#include <map>
#include <set>

#include "appendf.h"
#include "isolated_plugin.h"
#include "json_writer.h"
#include "model.h"

namespace baton {

namespace {

// For every op that more than one op pack declares: which pack wins for which versions, in precedence
// order (the config's op-pack-precedence, then load order).
struct Resolution {
  std::string op;
  int32_t from = 0, to = 0;
  std::string winner;
  std::vector<std::string> shadowed;
};

std::vector<Resolution> contested_ops(const PluginRegistry& reg) {
  const std::vector<LoadedPlugin*> packs = reg.op_packs();
  std::map<std::pair<int32_t, std::string>, int> declared_by;
  for (const LoadedPlugin* p : packs) {
    std::set<std::pair<int32_t, std::string>> ops;
    for (const OpDecl& op : p->ops) ops.insert({op.code, op.custom_name});
    for (const auto& key : ops) declared_by[key]++;
  }
  std::vector<Resolution> out;
  for (const auto& [key, count] : declared_by) {
    if (count < 2) continue;
    int32_t max_version = 0;
    for (const LoadedPlugin* p : packs) {
      for (const OpDecl& op : p->ops) {
        if (op.code == key.first && op.custom_name == key.second) max_version = std::max(max_version, op.max_version);
      }
    }
    const std::string name = key.first == BATON_OP_CUSTOM ? key.second : op_name(key.first);
    for (int32_t v = 1; v <= max_version; ++v) {
      std::string winner;
      std::vector<std::string> shadowed;
      for (const LoadedPlugin* p : packs) {
        if (!p->find_op(key.first, key.second, v)) continue;
        if (winner.empty()) winner = p->name; else shadowed.push_back(p->name);
      }
      if (winner.empty()) continue;
      if (!out.empty() && out.back().op == name && out.back().to == v - 1 && out.back().winner == winner &&
          out.back().shadowed == shadowed) {
        out.back().to = v;
      } else {
        out.push_back({name, v, v, winner, shadowed});
      }
    }
  }
  return out;
}

}  // namespace

std::string plugins_json(const Environment& env) {
  const PluginRegistry& reg = env.registry();
  JsonWriter j;
  j.begin_object();
  j.field("abi_version", std::to_string(BATON_ABI_VERSION_MAJOR) + "." + std::to_string(BATON_ABI_VERSION_MINOR));
  j.field("config", env.config().path);
  j.array_of("plugin_dirs", reg.dirs());
  j.key("plugins").begin_array();
  for (const auto& p : reg.plugins()) {
    j.begin_object();
    j.field("name", p->name).field("version", p->version).field("kind", p->kind_name());
    j.field("abi_version", std::to_string(p->abi_major) + "." + std::to_string(p->abi_minor));
    j.field("path", p->path).field("description", p->description).field("threads", p->threads);
    // The name config sections and isolation find this file by (the manual's rule for file names).
    j.field("name_from_file", plugin_name_from_file(p->path));
    if (!p->loaded_by.empty()) j.field("loaded_by", p->loaded_by);
    j.field("isolation", p->isolated ? "process" : "in-process");
    j.field("unloaded", p->unloaded());
    if (p->kind != BATON_PLUGIN_LOADER) j.field("parked", p->parked());
    if (p->isolated) {
      j.field("invoke_timeout_ms", static_cast<int64_t>(p->isolated->settings().invoke_timeout_ms));
      j.field("prepare_timeout_ms", static_cast<int64_t>(p->isolated->settings().prepare_timeout_ms));
    }
    j.field("options_validated", (p->flags & BATON_PLUGIN_FLAG_ANY_OPTIONS) == 0);
    if (p->kind == BATON_PLUGIN_DELEGATE) {
      auto devices = p->devices();
      j.field("declares_devices", p->declares_devices());
      // Whether it chooses nodes itself (select_nodes) beyond the ops it declares.
      j.field("selects_nodes", p->selects_nodes());
      j.key("devices");
      if (devices) {
        j.begin_array();
        for (const DeviceInfo& d : devices.value()) {
          j.begin_object().field("name", d.name).field("kind", device_kind_name(d.kind));
          j.field("preference", d.preference).end_object();
        }
        j.end_array();
      } else {
        j.null();
        j.field("device_error", devices.error());
      }
      const ChainPlacement* place = env.find_placement(p->name);
      j.key("chain_position");
      if (place && place->position >= 0) j.value(place->position); else j.null();
      j.field("chain_reason", place ? place->reason : std::string());
      j.field("created", p->created);
    }
    j.key("ops").begin_array();
    for (const OpDecl& op : p->ops) {
      j.begin_object();
      j.field("op", op.code == BATON_OP_CUSTOM ? op.custom_name : op_name(op.code));
      j.field("custom", op.code == BATON_OP_CUSTOM);
      if (op.code == BATON_OP_STABLEHLO_COMPOSITE) j.field("composite", op.custom_name);
      j.field("min_version", op.min_version).field("max_version", op.max_version);
      j.end_object();
    }
    j.end_array();
    j.key("options").begin_array();
    for (const OptionDecl& o : p->options) {
      j.begin_object();
      j.field("name", o.name).field("type", option_type_name(o.type));
      j.key("default");
      if (o.default_value) j.value(*o.default_value); else j.null();
      j.key("value");
      if (auto it = p->option_values.find(o.name); it != p->option_values.end()) j.value(it->second); else j.null();
      j.field("help", o.help);
      j.end_object();
    }
    j.end_array();
    j.end_object();
  }
  j.end_array();
  j.key("delegate_chain").begin_array();
  for (const LoadedPlugin* d : env.delegate_chain()) j.value(d->name);
  j.end_array();
  j.field("delegate_chain_source", env.chain_source());
  j.key("disabled").begin_array();
  for (const DisabledPlugin& d : reg.disabled()) j.begin_object().field("name", d.name).field("path", d.path).end_object();
  j.end_array();
  j.key("op_resolution").begin_array();
  for (const Resolution& r : contested_ops(reg)) {
    j.begin_object().field("op", r.op).field("min_version", r.from).field("max_version", r.to);
    j.field("plugin", r.winner).array_of("shadowed", r.shadowed).end_object();
  }
  j.end_array();
  j.key("skipped").begin_array();
  for (const SkippedPlugin& s : reg.skipped()) {
    j.begin_object().field("path", s.path).field("reason", s.reason).end_object();
  }
  j.end_array();
  j.end_object();
  return j.str();
}

std::string plugins_text(const Environment& env) {
  const PluginRegistry& reg = env.registry();
  std::string out;
  appendf(out, "config: %s\n", env.config().path.empty() ? "(none)" : env.config().path.c_str());
  appendf(out, "plugin folders, in search order:\n");
  for (const std::string& d : reg.dirs()) appendf(out, "  %s\n", d.c_str());
  appendf(out, "\n%zu plugin(s) loaded:\n", reg.plugins().size());
  for (const auto& p : reg.plugins()) {
    appendf(out, "\n%s %s (%s, ABI %u.%u)\n  %s\n  path: %s\n  threads: %d\n", p->name.c_str(), p->version.c_str(),
                p->kind_name(), p->abi_major, p->abi_minor, p->description.c_str(), p->path.c_str(), p->threads);
    if (!p->loaded_by.empty()) appendf(out, "  loaded by: %s\n", p->loaded_by.c_str());
    if (p->unloaded()) appendf(out, "  unloaded: this environment does not use it (read when it started)\n");
    if (p->parked()) appendf(out, "  parked: no model of this environment uses it now (loaded again when one does)\n");
    if (p->isolated) {
      const pid_t pid = p->isolated->pid();
      appendf(out, "  isolation: process (baton-plugin-host%s; invoke timeout %d ms, prepare timeout %d ms)\n",
                  pid > 0 ? (", pid " + std::to_string(pid)).c_str() : "", p->isolated->settings().invoke_timeout_ms,
                  p->isolated->settings().prepare_timeout_ms);
    }
    if (p->has_delegate && p->selects_nodes()) {
      appendf(out, "  ops: chosen by the delegate itself, over the whole graph\n");
    } else if (p->kind != BATON_PLUGIN_LOADER) {
      appendf(out, "  ops (%zu):", p->ops.size());
      for (size_t i = 0; i < p->ops.size(); ++i) {
        appendf(out, "%s%s", i % 6 == 0 ? "\n    " : ", ", p->ops[i].describe().c_str());
      }
      appendf(out, "\n");
    }
    if (p->kind == BATON_PLUGIN_DELEGATE) {
      auto devices = p->devices();
      if (!devices) {
        appendf(out, "  devices: %s\n", devices.error().c_str());
      } else if (!p->declares_devices()) {
        appendf(out, "  devices: none declared (%s): counted as one cpu device\n",
                    p->loaded_by.empty() ? "an ABI 1.0 plugin" : "a wrapped foreign plugin");
      } else if (devices->empty()) {
        appendf(out, "  devices: none found\n");
      } else {
        appendf(out, "  devices:\n");
        for (const DeviceInfo& d : devices.value()) {
          appendf(out, "    %s: %s (preference %d)\n", device_kind_name(d.kind), d.name.c_str(), d.preference);
        }
      }
    }
    if (p->flags & BATON_PLUGIN_FLAG_ANY_OPTIONS) {
      appendf(out, "  options: any key of [plugin.%s], passed to it as text; baton cannot validate them\n",
                  p->name.c_str());
      for (const auto& [key, value] : p->option_values) appendf(out, "    %s = %s\n", key.c_str(), value.c_str());
    }
    if (!p->options.empty()) appendf(out, "  options:\n");
    for (const OptionDecl& o : p->options) {
      auto it = p->option_values.find(o.name);
      appendf(out, "    %s (%s, default %s, now %s): %s\n", o.name.c_str(), option_type_name(o.type),
                  o.default_value ? o.default_value->c_str() : "none",
                  it != p->option_values.end() ? it->second.c_str() : "unset", o.help.c_str());
    }
  }
  appendf(out, "\ndelegate chain:");
  if (env.delegate_chain().empty()) appendf(out, " (none)");
  for (const LoadedPlugin* d : env.delegate_chain()) appendf(out, " %s", d->name.c_str());
  if (env.chain_source() == "default") {
    appendf(out, "\n  the default chain (no `delegates` in a config, no --delegate): delegates ordered by their best\n"
                "  device, npu then gpu then cpu, then by the preference they declare, then by name; delegates\n"
                "  whose only devices are emulated are left out\n");
  } else {
    appendf(out, "\n  set by %s\n", env.chain_source().c_str());
  }
  for (const ChainPlacement& place : env.chain_placements()) {
    if (place.position >= 0) appendf(out, "  %d. %s: %s\n", place.position + 1, place.name.c_str(), place.reason.c_str());
  }
  for (const ChainPlacement& place : env.chain_placements()) {
    if (place.position < 0) appendf(out, "  -  %s: %s\n", place.name.c_str(), place.reason.c_str());
  }
  if (!reg.disabled().empty()) {
    appendf(out, "\ndisabled by the config (not opened when the file name says the plugin's name):\n");
    for (const DisabledPlugin& d : reg.disabled()) appendf(out, "  %s: %s\n", d.name.c_str(), d.path.c_str());
  }
  const std::vector<Resolution> contested = contested_ops(reg);
  if (!contested.empty()) {
    appendf(out, "\nops declared by more than one op pack (winner first, by op-pack-precedence then load order):\n");
    for (const Resolution& r : contested) {
      std::string versions = "v" + std::to_string(r.from) + (r.to != r.from ? "-" + std::to_string(r.to) : "");
      std::string others;
      for (const std::string& s : r.shadowed) others += (others.empty() ? "" : ", ") + s;
      appendf(out, "  %s %s: %s%s%s\n", r.op.c_str(), versions.c_str(), r.winner.c_str(),
                  others.empty() ? "" : " (shadows ", others.empty() ? "" : (others + ")").c_str());
    }
  }
  if (!reg.skipped().empty()) {
    appendf(out, "\nskipped %zu file(s):\n", reg.skipped().size());
    for (const SkippedPlugin& s : reg.skipped()) appendf(out, "  %s: %s\n", s.path.c_str(), s.reason.c_str());
  }
  return out;
}

}  // namespace baton
