#!/usr/bin/env bash
# On a machine with a GPU: install the CUDA provider libraries of this onnxruntime-node when they are
# missing, then bench/providers.ts — logits parity (≤ 1e-3) and decode tokens/s of cuda and webgpu
# against cpu on the default bundle (or $1). Exit status 1 when a provider that started misses parity.
#   bash scripts/device-check.sh [BUNDLE_DIR] [OUT_JSON]
set -euo pipefail
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || echo "no nvidia-smi: cuda will fall back"
if ! find node_modules/onnxruntime-node/bin -name libonnxruntime_providers_cuda.so | grep -q .; then
  # Downloads Microsoft.ML.OnnxRuntime.Gpu.Linux of the same version from nuget (docs/providers.md).
  ONNXRUNTIME_NODE_INSTALL=cuda12 npm rebuild onnxruntime-node || echo "could not fetch the CUDA provider libraries"
fi
node --import tsx bench/providers.ts --bundle "${1:-resources/bundles/default}" --providers cuda,webgpu \
  --out "${2:-bench/results/providers-device.json}"
