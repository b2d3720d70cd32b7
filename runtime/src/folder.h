// Fold's decisions, as functions of the model's subgraph alone (folder.cc runs them on a Subgraph; `baton
// inspect` counts them): which nodes are dead and which can be computed once at load.
#pragma once

#include <vector>

#include "model.h"

namespace baton {

// Which nodes of a subgraph can be computed once at load: builtin ops (not custom ones, which may keep
// state, nor random ones) whose inputs are all constant, counting the outputs of earlier foldable nodes
// as constant, and whose outputs are neither subgraph outputs nor variables.
std::vector<bool> foldable_nodes(const SubgraphInfo& graph);

// Which nodes of a subgraph compute nothing anyone reads: none of their outputs is a subgraph output or
// an input of a node that is not dead itself (iterated to a fixed point, so a chain feeding only dead
// nodes is dead too). Custom ops, nodes without outputs and nodes touching a variable tensor are kept:
// they may have effects beyond their outputs.
std::vector<bool> dead_nodes(const SubgraphInfo& graph);

}  // namespace baton
