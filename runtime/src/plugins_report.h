// What an environment loaded, for people and scripts (`baton plugins`, baton_environment_report): the
// config, the plugin folders, each plugin (kind, ABI, path, isolation, ops, devices, options and their
// values), the delegate chain and why each delegate has its place, the ops more than one op pack
// declares and which wins, the plugins the config disabled and the files skipped with the reason.
//
// JSON (stable; fields are only ever added):
//   {"abi_version", "config", "plugin_dirs": [PATH],
//    "plugins": [{"name", "version", "kind", "abi_version", "path", "description", "threads",
//                 "loaded_by" (a wrapped foreign plugin), "isolation": "process"|"in-process",
//                 "invoke_timeout_ms", "prepare_timeout_ms" (isolated only), "options_validated",
//                 delegates: "declares_devices", "devices": [{"name", "kind", "preference"}]|null,
//                            "device_error" (devices null), "chain_position": N|null, "chain_reason", "created",
//                 "ops": [{"op", "custom", "min_version", "max_version"}],
//                 "options": [{"name", "type", "default", "value", "help"}]}],
//    "delegate_chain": [NAME], "delegate_chain_source",
//    "disabled": [{"name", "path"}],
//    "op_resolution": [{"op", "min_version", "max_version", "plugin", "shadowed": [NAME]}],
//    "skipped": [{"path", "reason"}]}
#pragma once

#include <string>

#include "environment.h"

namespace baton {

std::string plugins_text(const Environment& env);
std::string plugins_json(const Environment& env);

}  // namespace baton
