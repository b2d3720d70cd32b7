#!/usr/bin/env bash
# make-transformer-cases.sh - regenerate tests/data/transformer/: small float32 transformer encoders
# written as TensorFlow's converter writes them (3-D FULLY_CONNECTED with keep_num_dims, attention through
# RESHAPE / TRANSPOSE / BATCH_MATMUL / SOFTMAX, layer norm as MEAN / SQUARED_DIFFERENCE / RSQRT, GELU as the
# builtin op or as POW / TANH arithmetic), with the outputs the native TensorFlow Lite 2.9 library computes
# for them.
#
# usage: tools/make-transformer-cases.sh       (tools/make-cases.sh transformer: the steps every set shares
#                                               are there)
#
# tools/transformer-models.mjs writes the models (odd sizes: sequences of 9 to 17, hidden sizes 16 to 36);
# tflite-peer runs each once, one thread, without XNNPACK, on its PRNG inputs (seed 0; token ids within
# the vocabulary). tests/generated_models_test.cc and tests/vulkan_real_models_test.cc check baton against
# them. The larger models the issue's
# benchmark uses come from `node tools/transformer-models.mjs --bench DIR` and flatc; they are not test
# data.
#
# Environment: TFLITE_PEER, LITERT_REF (see tools/make-cases.sh --help).
# Needs: node >= 20, flatc, bash, coreutils.
exec "$(dirname "${BASH_SOURCE[0]}")/make-cases.sh" transformer "$@"
