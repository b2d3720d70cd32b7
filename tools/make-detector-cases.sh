#!/usr/bin/env bash
# make-detector-cases.sh - regenerate tests/data/detector/: small float32 one-stage detectors written as
# TensorFlow's converter writes a YOLOX-style network without its NMS (a space-to-depth stem of
# STRIDED_SLICEs, SiLU convolutions with PADV2, RESIZE_NEAREST_NEIGHBOR upsampling, heads reshaped and
# joined, the box decode with slices of the last axis, EXP and LOGISTIC), with the outputs the native
# TensorFlow Lite 2.9 library computes for them.
#
# usage: tools/make-detector-cases.sh       (tools/make-cases.sh detector: the steps every set shares are
#                                            there)
#
# tools/detector-models.mjs writes the models; tflite-peer runs each once, one thread, without XNNPACK, on
# its PRNG inputs (seed 0). tests/generated_models_test.cc and tests/vulkan_real_models_test.cc check
# baton against them. `node tools/detector-models.mjs --bench DIR` writes a 320x320 one for benchmarks.
#
# Environment: TFLITE_PEER, LITERT_REF (see tools/make-cases.sh --help).
# Needs: node >= 20, flatc, bash, coreutils.
exec "$(dirname "${BASH_SOURCE[0]}")/make-cases.sh" detector "$@"
