// One measured point of a transfer path: a TransferLink of one size, banded or not, measured for
// throughput (`batch` transfers round-robin over the slots, several in flight; the steady rate is
// the bytes of transfers 2..batch over the time from the first completion to the last, which
// leaves out filling and draining the pipeline, and the whole batch's rate is kept too) and
// single-frame
// latency (worker done -> primary ready: the transfer is submitted ahead, waiting on a worker
// semaphore that the host signals after `lead`, and timed from that signal until the primary
// timeline is observed). Every primary image is poisoned before each run and compared with its
// worker image after it. Benchmark thread only.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "core/device.hpp"
#include "tandem/device_info.hpp"
#include "transfer/transfer_link.hpp"

namespace tandem::bench {

struct PathPoint {
    TransferPath path = TransferPath::HostCopy;
    std::uint32_t width = 0, height = 0;
    VkFormat format = VK_FORMAT_R8G8B8A8_UNORM;
    std::uint32_t band_rows_requested = 0;   // 0: the path's choice
    std::vector<std::uint32_t> band_heights; // when set, wins over band_rows_requested
    detail::BandHandOff hand_off = detail::BandHandOff::Submit;
    bool stream_copies = true; // cuda-peer: on its stream (false: the bridge's host step)
    std::uint32_t slots = 3;
    std::uint32_t batch = 8;
    std::uint32_t runs = 15;
    std::chrono::microseconds lead{1000};
    std::chrono::microseconds bridge_spin{1000}; // HostBridge::Options::spin
    // Latency runs: the benchmark thread also polls the worker timeline for each band before it
    // waits for the primary (PathResult::worker_band_seen_us).
    bool watch_worker = false;
    // Latency runs: time each band's copies on both GPUs (TransferObserver::times_bands_on_gpus),
    // where the devices allow it (PathResult::band_gpu_us).
    bool gpu_times = false;
    // A CPU worker writes the staging in place (TransferDesc::write_in_place; host-imported):
    // the benchmark's sources are the staging, and only the primary copies.
    bool write_in_place = false;
    // A CPU primary reads the staging in place (TransferDesc::read_in_place; host-imported):
    // the benchmark's targets are the staging, and only the worker copies.
    bool read_in_place = false;
};

// One band's copies timed on the GPUs, microseconds after the worker's release (medians).
struct BandGpuUs {
    double worker_begin = 0, worker_end = 0, primary_begin = 0, primary_end = 0;
};

struct PathResult {
    std::vector<std::uint32_t> band_heights; // the link's bands, top to bottom
    bool written_in_place = false;           // TransferLink::writes_in_place
    bool read_in_place = false;              // TransferLink::reads_in_place
    [[nodiscard]] std::uint32_t bands() const noexcept {
        return static_cast<std::uint32_t>(band_heights.size());
    }
    [[nodiscard]] std::uint32_t band_rows() const noexcept { // the tallest band's
        return band_heights.empty() ? 0
                                    : *std::max_element(band_heights.begin(), band_heights.end());
    }
    bool gpu_side_sync = false;
    Stats gbps;             // steady rate: first completion to last
    Stats gbps_whole_batch; // first submit to last completion
    Stats latency_us;
    // Host-bridged: when each band was handed to the primary in the latency runs, microseconds
    // after the worker's release (median per band; the last band's is what the primary's last
    // upload and the completion leave of the latency).
    std::vector<double> band_handed_us;
    // With PathPoint::watch_worker: when the benchmark thread saw each worker band done, from the
    // release (median per band): against band_handed_us, what each hand-off took.
    std::vector<double> worker_band_seen_us;
    // With PathPoint::gpu_times where the devices allow it: each band's copies on the GPUs.
    std::vector<BandGpuUs> band_gpu_us;
    // Every slot's last transfer of each timed batch, and every transfer of an untimed stream in
    // which each carries bytes of its own (a stale, skipped or reordered one is caught).
    bool verified = false;
    std::string error; // non-empty when the point could not be measured
};

[[nodiscard]] PathResult measure_path(const detail::Device& worker, const detail::Device& primary,
                                      const PairInfo& pair, const PathPoint& point);

} // namespace tandem::bench
