// TransferObserver: what a measurement (the transfer benchmark, tests) plugs into a TransferLink
// (TransferDesc::observer) so the hot path carries no benchmark-only fields: the band heights it
// wants to measure, whether to time each band's copies on the GPUs (read back with
// TransferLink::read_gpu_times), and a call as each band is handed to the primary.
//
// Threads: band_heights() and times_bands_on_gpus() are asked once, by the link's constructor;
// on_band_handed() runs on the pair's bridge thread. Lifetime: the link holds it (shared_ptr)
// until it is destroyed.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

namespace tandem::detail {

// One band of a transfer, timed on the GPUs: when the worker's copy of it and the primary's copy
// of it began and ended, on the host's steady clock.
struct BandGpuTimes {
    std::chrono::steady_clock::time_point worker_begin, worker_end;
    std::chrono::steady_clock::time_point primary_begin, primary_end;
};

class TransferObserver {
public:
    virtual ~TransferObserver() = default;
    TransferObserver() = default;
    TransferObserver(const TransferObserver&) = delete;
    TransferObserver& operator=(const TransferObserver&) = delete;

    // Band heights, top to bottom, adding up to the image's height (else the link's constructor
    // throws Error); they win over TransferDesc::band_rows. Empty: the path's bands (its even
    // bands measured best on the H200s). Paths without bands (same device, zero copy) ignore it.
    [[nodiscard]] virtual std::vector<std::uint32_t> band_heights() const { return {}; }
    // True: a timestamp before and after each band's copy on both devices, where both have
    // host-timed queries (Device::has_host_timed_queries()) and both copy queues' families write
    // timestamps (TransferLink::gpu_times() says whether). Each costs the copy engines a few us.
    [[nodiscard]] virtual bool times_bands_on_gpus() const { return false; }
    // Host-bridged links: band `band` of the transfer through `slot` was handed to the primary
    // (its copy submitted or its gate raised). Must be cheap.
    virtual void on_band_handed(std::uint32_t /*slot*/, std::uint32_t /*band*/) noexcept {}
};

} // namespace tandem::detail
