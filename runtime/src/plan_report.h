// What the interpreter decided, for people and scripts: which plugin runs each node and why the
// earlier delegates did not, the partitions with their boundary tensors and bytes, and totals.
//
// JSON (stable; fields are only ever added):
//   {"model": PATH, "entry_subgraph": INDEX,
//    "nodes": [{"index", "op", "version",
//               "placement": {"kind": "delegate"|"op-pack"|"runtime"|"folded"|"dropped", "plugin": NAME,
//                             "partition": ID|null},
//               "refusals": [{"plugin", "reason"}],
//               "callees": [SUBGRAPH] (control-flow nodes only: the subgraphs they run),
//               "composite": NAME (STABLEHLO_COMPOSITE only: the operation its decomposition runs)}],
//    "partitions": [{"id", "plugin", "nodes": [INDEX], "inputs": [TENSOR], "outputs": [TENSOR],
//                    "boundary_bytes", "isolated" (the plugin runs in a process of its own)}],
//    "subgraphs": [{"index", "name", "nodes": [...], "partitions": [...]}] (the other subgraphs that run),
//    "fallbacks": [{"plugin", "partition": ID|null (null: an op pack gave up a node), "stage", "reason",
//                   "nodes": [INDEX]}],
//    "totals": {"nodes", "folded", "dropped", "per_plugin": {NAME: NODES}, "partitions", "host_round_trips"}}
// "nodes", "partitions" and "totals" are the entry subgraph's; "runtime": control flow and resource
// variables, which the runtime runs itself.
// "dropped": a dead node (nothing reads its outputs), removed at load.
// A host round trip is one hand-over from the host to a delegate partition and back.
#pragma once

#include <string>

#include "interpreter.h"

namespace baton {

// "deleg-a: 162 of 164 nodes in 1 partition; builtin: 2 nodes; 74 folded at load"
std::string plan_summary(const Interpreter& interp);
// For people: a node names each delegate that refused it by a tag ("cpu refused: [r1]") and the
// "refusals:" section gives each distinct (plugin, reason) once ("[r1] cpu refused: ..."). The JSON keeps the
// reason on every node.
std::string plan_text(const Interpreter& interp);
std::string plan_json(const Interpreter& interp);
std::string plan_dot(const Interpreter& interp);

}  // namespace baton
