#!/usr/bin/env bash
# make-quant-op-cases.sh - regenerate tests/data/quant-ops/: one-op quantized models and the outputs the
# native TensorFlow Lite 2.9 library computes for them.
#
# usage: tools/make-quant-op-cases.sh       (tools/make-cases.sh quant-op: the steps every set shares are
#                                            there)
#
# tools/quant-op-models.mjs writes the models (our own small models: every 8-bit and int8-weight op of
# the builtin pack, uint8 and int8); tflite-peer runs each on the oracle's seed-0 PRNG inputs. Each case
# directory gets
#   model.tflite  in_I.npy  out_0.npy  meta.json (op, types, library version; no paths or timings)
# tests/quant_ops_test.cc runs every case with the builtin pack: 8-bit outputs must be equal bit for
# bit, float outputs within 1e-5 of the largest reference value.
#
# Environment: TFLITE_PEER (see tools/make-cases.sh --help).
# Needs: node >= 20, flatc, bash, coreutils.
exec "$(dirname "${BASH_SOURCE[0]}")/make-cases.sh" quant-op "$@"
