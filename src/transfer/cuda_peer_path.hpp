// CudaPeerPath: for two NVIDIA adapters CUDA sees (the pair matrix's cuda-peer entry), a band
// moves GPU to GPU through CUDA instead of host memory. Each side's staging is a device-local
// Vulkan buffer with a dedicated allocation, exported as an opaque fd and imported into CUDA on
// its own GPU. The worker copies a band of its image into its staging and releases the range to
// VK_QUEUE_FAMILY_EXTERNAL; CUDA copies it into the primary's staging; the primary acquires the
// range from VK_QUEUE_FAMILY_EXTERNAL and copies it into its image.
//
// The CUDA copy: between two GPUs, a peer copy (cuMemcpyPeerAsync, peer access enabled) into
// cuMemAlloc memory on the primary GPU, then a copy within the primary GPU into its staging: a
// peer copy between two Vulkan-imported buffers took a slow path on the H200s (34-36 GB/s
// against 352-389 into CUDA's own memory). On one GPU opened twice (equal device UUIDs), one
// copy within the GPU; zero-copy and shared memory come first there, so it runs only when asked
// for (RuntimeOptions::transfer_path, the benchmark).
//
// Ordered on the GPUs where both devices export timelines (make_stream, StreamHandOff): CUDA
// streams wait for each band on the worker timeline imported into CUDA, copy, and signal a gate
// timeline of the primary's, on which the primary's copies, submitted at once, wait; no host
// thread between the sides (H200 opened twice, 1920x1080: 389 us against 505 with the host
// step). Else a host step (host_step): on the pair's bridge thread once the band is done, the
// copy is issued and the CUDA stream synchronised, so the semaphores stay Vulkan's (a host thread
// blocked on a CUDA-signalled timeline woke about 10 ms late on the H200s). A CUDA error fails
// the copy with its words (host_step_error, or the stream's).
//
// What copies between the two stagings is a StagingCopier: CUDA's, or one a test gives (the host
// through both devices' mappings of the stagings, its stream a host thread), so that the Vulkan
// side of the path (the exports, the ownership transfers, the band offsets, the gate) is checked
// where there is no CUDA.
//
// Threads and lifetime as TransferPathBackend; host_step runs on one thread at a time (the
// pair's bridge), and the copier (CUDA's imports) is released before the Vulkan memory; a
// stream it made goes before it.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "transfer/opaque_fd_memory.hpp"
#include "transfer/staging_copier.hpp"
#include "transfer/transfer_path.hpp"

namespace tandem::detail {

// The fault-injection point (core/vk_check.hpp, context "CUDA copy cuda-peer") that stands for
// a failed CUDA copy in the tests, for the host step and the stream alike: the sentence for an
// injected fault (`result` set to it), or empty (`result` VK_SUCCESS).
[[nodiscard]] std::string injected_cuda_copy_fault(VkResult& result);
// How a failed CUDA copy is reported: "the CUDA copy between the GPUs failed: <why>".
[[nodiscard]] std::string cuda_copy_failure(const std::string& why);

class CudaPeerPath final : public TransferPathBackend {
public:
    // With CUDA's copier. Throws Error when CUDA, the adapters or the imports refuse (the
    // reason in its words).
    CudaPeerPath(const Device& worker, const Device& primary, const StagingLayout& layout);
    // With the copier `make` gives.
    CudaPeerPath(const Device& worker, const Device& primary, const StagingLayout& layout,
                 const StagingCopierFactory& make);
    ~CudaPeerPath() override;

    [[nodiscard]] TransferPath kind() const noexcept override { return TransferPath::CudaPeer; }
    void record_worker_band(VkCommandBuffer cmd, std::uint32_t slot, const Band& band,
                            VkImage image, VkImageLayout layout) const override;
    [[nodiscard]] bool has_host_step() const noexcept override { return true; }
    [[nodiscard]] VkResult host_step(std::uint32_t slot, const Band& band) const noexcept override;
    [[nodiscard]] std::string host_step_error() const override;
    [[nodiscard]] bool has_stream() const noexcept override { return true; }
    [[nodiscard]] std::unique_ptr<StagingStream>
    make_stream(const TimelineSemaphore& worker_timeline, TimelineSemaphore& gate) const override;
    [[nodiscard]] bool stream_signals_from_host() const noexcept override {
        return m_copier->stream_signals_from_host();
    }
    void record_primary_band(VkCommandBuffer cmd, std::uint32_t slot, const Band& band,
                             VkImage image) const override;

private:
    // Vulkan first: destroyed after the copier that imports it.
    ExportableBuffer m_worker_staging;
    ExportableBuffer m_primary_staging;
    std::unique_ptr<StagingCopier> m_copier;
    mutable std::mutex m_error_mutex;
    mutable std::string m_error;
};

} // namespace tandem::detail
