// The messages between the host and a `baton-plugin-host` child (see wire.h for the framing). The host
// asks, the child answers each request with one reply; before the reply the child may send any number
// of log lines. Map and unmap requests are the exception: they have no reply.
//
// A *group* describes the nodes of one call (one node for check_node and op-pack kernels, a partition's
// nodes for a delegate) with every tensor they touch, as the plugin would read them through the host
// table; tensors are named by their slot in the group. Constant data travels as a place in a shared
// block (the mapped model file) or inline; other tensors' data only as places in shared blocks, at invoke.
//
//   group:    u32 tensor count, tensors, u32 node count, nodes
//   tensor:   i32 index, string name, i32 type, vector<i32> dims, u64 bytes, i32 constant,
//             vector<f32> scales, vector<i64> zero points, i32 quantized dimension,
//             u8 data kind (0 none, 1 block: u64 id, u64 offset; 2 inline: bytes)
//   node:     i32 index, i32 code, string custom name, i32 version, vector<i32> input slots (-1: omitted),
//             vector<i32> output slots, bytes baton_builtin_options, vector<i32> the options' array
//             (RESHAPE new_shape, SQUEEZE squeeze_dims, BUCKETIZE boundaries as float bits), bytes custom options
#pragma once

#include <cstdint>

namespace baton::isolation {

enum class Message : uint32_t {
  // host -> child
  load = 1,            // string path                        -> descriptor
  map_block,           // u64 id, u64 size, u8 writable, fd  (no reply)
  unmap_block,         // u64 id                             (no reply)
  create,              // u64 instance, settings           -> status
  probe,               // u64 instance, settings           -> status, u32 n, n x (string name, i32 kind, i32 preference)
  check_node,          // u64 instance, group                -> i32 answer, string reason
  partition_init,      // u64 instance, u64 selection (0: none), then for none a group, else vector<i32>
                       // node indices (slots are the selection's: tensor indices), i32 id,
                       // vector<i32> input slots, vector<i32> output slots -> status, u64 handle
  partition_prepare,   // u64 handle, shapes, places of the data the host has -> status, shapes set,
                       //                                    vector<i32> dynamic slots
  partition_invoke,    // u64 handle, places                 -> status
  partition_free,      // u64 handle                         -> status
  kernel_init,         // u64 instance, group (one node)     -> status, u64 handle
  kernel_prepare,      // u64 handle, shapes, places         -> status, shapes set, vector<i32> dynamic slots
  kernel_invoke,       // u64 handle, places                 -> status
  kernel_free,         // u64 handle                         -> status
  destroy,             // u64 instance                       -> status (the child exits when the host closes the socket)
  select_nodes,        // u64 instance, group of the whole graph (slot = tensor index), i32 node count,
                       // vector<i32> free nodes             -> status, u64 selection, vector<u8> selected
  selection_free,      // u64 selection                      -> status
  wrap,                // string file (after load, of a loader) -> descriptor of the plugin the loader
                       //                                       wraps it into (BATON_UNSUPPORTED, no message: not taken)
  // child -> host
  log = 100,           // i32 level, string message
  reply,               // i32 status, string error, then the request's answer
};

// An instance is one Environment of the host: its own create, options and plugin state; the host numbers
// them. settings: string plugin path, i32 threads, u32 n, n x (string name, string value).
// shapes: u32 n, n x (i32 slot, vector<i32> dims). places: u32 n, n x (i32 slot, u64 block, u64 offset).

// The descriptor the child reads from the plugin's entry point:
//   i32 ok, string error (when not ok), u32 abi major, u32 abi minor, string name, string version, i32 kind,
//   string description, u32 flags, u32 op count, ops (i32 code, string custom, i32 min, i32 max),
//   u32 option count, options (string name, i32 type, u8 has default, string default, string help),
//   u8 has check_node, u8 has select_nodes, u8 has probe, u8 is a loader

}  // namespace baton::isolation
