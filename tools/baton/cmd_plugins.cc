// `baton plugins`: what was loaded from where, what each plugin offers, and what was skipped and why.
#include <cstdio>

#include "commands.h"
#include "json_writer.h"
#include "model.h"

namespace baton::tool {

int cmd_plugins(const GlobalOptions& g, const boost::program_options::variables_map& vm) {
  int code = kExitOk;
  auto env = make_environment(g, &code);
  if (!env) return code;
  const PluginRegistry& reg = env->registry();
  if (vm.count("json")) {
    JsonWriter j;
    j.begin_object();
    j.field("abi_version", std::to_string(BATON_ABI_VERSION_MAJOR) + "." + std::to_string(BATON_ABI_VERSION_MINOR));
    j.field("config", env->config().path);
    j.array_of("plugin_dirs", reg.dirs());
    j.key("plugins").begin_array();
    for (const auto& p : reg.plugins()) {
      j.begin_object();
      j.field("name", p->name).field("version", p->version).field("kind", p->kind_name());
      j.field("abi_version", std::to_string(p->abi_major) + "." + std::to_string(p->abi_minor));
      j.field("path", p->path).field("description", p->description);
      j.key("ops").begin_array();
      for (const OpDecl& op : p->ops) {
        j.begin_object();
        j.field("op", op.code == BATON_OP_CUSTOM ? op.custom_name : op_name(op.code));
        j.field("custom", op.code == BATON_OP_CUSTOM);
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
    for (const LoadedPlugin* d : env->delegate_chain()) j.value(d->name);
    j.end_array();
    j.key("skipped").begin_array();
    for (const SkippedPlugin& s : reg.skipped()) {
      j.begin_object().field("path", s.path).field("reason", s.reason).end_object();
    }
    j.end_array();
    j.end_object();
    std::printf("%s\n", j.str().c_str());
    return kExitOk;
  }
  std::printf("config: %s\n", env->config().path.empty() ? "(none)" : env->config().path.c_str());
  std::printf("plugin folders, in search order:\n");
  for (const std::string& d : reg.dirs()) std::printf("  %s\n", d.c_str());
  std::printf("\n%zu plugin(s) loaded:\n", reg.plugins().size());
  for (const auto& p : reg.plugins()) {
    std::printf("\n%s %s (%s, ABI %u.%u)\n  %s\n  path: %s\n", p->name.c_str(), p->version.c_str(), p->kind_name(),
                p->abi_major, p->abi_minor, p->description.c_str(), p->path.c_str());
    std::printf("  ops (%zu):", p->ops.size());
    for (size_t i = 0; i < p->ops.size(); ++i) {
      std::printf("%s%s", i % 6 == 0 ? "\n    " : ", ", p->ops[i].describe().c_str());
    }
    std::printf("\n");
    if (!p->options.empty()) std::printf("  options:\n");
    for (const OptionDecl& o : p->options) {
      auto it = p->option_values.find(o.name);
      std::printf("    %s (%s, default %s, now %s): %s\n", o.name.c_str(), option_type_name(o.type),
                  o.default_value ? o.default_value->c_str() : "none",
                  it != p->option_values.end() ? it->second.c_str() : "unset", o.help.c_str());
    }
  }
  std::printf("\ndelegate chain:");
  if (env->delegate_chain().empty()) std::printf(" (none)");
  for (const LoadedPlugin* d : env->delegate_chain()) std::printf(" %s", d->name.c_str());
  std::printf("\n");
  if (!reg.skipped().empty()) {
    std::printf("\nskipped %zu file(s):\n", reg.skipped().size());
    for (const SkippedPlugin& s : reg.skipped()) std::printf("  %s: %s\n", s.path.c_str(), s.reason.c_str());
  }
  return kExitOk;
}

}  // namespace baton::tool
