#!/usr/bin/env bash
# make-control-flow-cases.sh - regenerate tests/data/control-flow/: models with several subgraphs (WHILE,
# IF, CALL_ONCE with resource variables, signatures) and the outputs the native TensorFlow Lite 2.9
# library computes for them.
#
# usage: tools/make-control-flow-cases.sh       (tools/make-cases.sh control-flow: the steps every set
#                                                shares are there)
#
# tools/control-flow-models.mjs writes the models; tflite-peer runs subgraph 0 once on the oracle's PRNG
# inputs (seed 0, narrowed by the case's --int-range). Each case directory gets model.tflite, in_I.npy,
# out_I.npy and meta.json; a case marked --no-reference (an endless loop, a recursive model, loops
# sharing a body that TFLite 2.9 fails) gets its model only; a case marked --litert (STABLEHLO_COMPOSITE,
# which TFLite 2.9 lacks) gets LiteRT 2.5's outputs (../shared/reference/litert-js, or $LITERT_REF).
# tests/control_flow_test.cc and control_flow_shapes_test.cc check baton against them, and
# derive by hand what the library cannot show (several invokes of a stateful model, a signature on another
# subgraph, the shared body).
#
# Environment: TFLITE_PEER, LITERT_REF (see tools/make-cases.sh --help).
# Needs: node >= 20, flatc, bash, coreutils.
exec "$(dirname "${BASH_SOURCE[0]}")/make-cases.sh" control-flow "$@"
