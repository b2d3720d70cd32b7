// Counters of one served model version, read by /metrics (Prometheus text format). Lock-free: workers
// and protocol threads update them on every request.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

namespace baton::serve {

struct ModelMetrics {
  // Upper bounds (seconds) of the latency histogram's buckets; +Inf is the count.
  static constexpr std::array<double, 14> kBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                      0.1,    0.25,  0.5,    1,     2.5,  5,    10};
  std::atomic<uint64_t> requests{0};  // every infer request that reached the model (accepted or refused)
  std::atomic<uint64_t> failures{0};  // of which failed: refused (queue full, bad input) or failed to run
  std::atomic<uint64_t> queue_full{0};
  std::atomic<uint64_t> deadline_exceeded{0};
  std::atomic<uint64_t> runs{0};  // interpreter runs: a batch of requests is one
  std::array<std::atomic<uint64_t>, kBuckets.size()> bucket_counts{};  // not cumulative
  std::atomic<uint64_t> latency_count{0};
  std::atomic<uint64_t> latency_sum_ns{0};

  void observe_latency(double seconds) {
    for (size_t i = 0; i < kBuckets.size(); ++i) {
      if (seconds <= kBuckets[i]) {
        bucket_counts[i].fetch_add(1, std::memory_order_relaxed);
        break;
      }
    }
    latency_count.fetch_add(1, std::memory_order_relaxed);
    latency_sum_ns.fetch_add(static_cast<uint64_t>(seconds * 1e9), std::memory_order_relaxed);
  }
};

}  // namespace baton::serve
