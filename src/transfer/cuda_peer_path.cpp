#include "transfer/cuda_peer_path.hpp"

#include <algorithm>
#include <exception>

#include "core/resources.hpp"
#include "core/vk_check.hpp"
#include "tandem/error.hpp"
#include "transfer/link_copy_queue.hpp"

namespace tandem::detail {
namespace {

constexpr const char* k_other_paths = "Use the host-imported or host-copy path";

// Why `worker` and `primary` cannot use the path (one sentence), or empty.
std::string refusal(const Device& worker, const Device& primary) {
    const DeviceInfo& w = worker.info();
    const DeviceInfo& p = primary.info();
    if (!cuda_driver().ready) {
        return "CUDA is not available: " + cuda_driver().error;
    }
    for (const DeviceInfo* d : {&w, &p}) {
        if (!d->cuda.present) {
            return d->name + " (adapter " + std::to_string(d->index) +
                   ") is no CUDA device: " + d->cuda.reason;
        }
    }
    if (worker.fn().get_memory_fd == nullptr || primary.fn().get_memory_fd == nullptr) {
        return "The CUDA path needs VK_KHR_external_memory_fd on both devices";
    }
    if (w.cuda.ordinal != p.cuda.ordinal &&
        std::find(w.cuda.peers.begin(), w.cuda.peers.end(), p.device_uuid) == w.cuda.peers.end()) {
        return "CUDA reports no peer access from device " + std::to_string(w.cuda.ordinal) +
               " to device " + std::to_string(p.cuda.ordinal) + " (cuDeviceCanAccessPeer)";
    }
    return {};
}

} // namespace

CudaPeerPath::CudaPeerPath(const Device& worker, const Device& primary, const StagingLayout& layout)
    : TransferPathBackend(worker, primary, layout) {
    if (std::string why = refusal(worker, primary); !why.empty()) {
        throw Error(VK_ERROR_FEATURE_NOT_PRESENT, why, k_other_paths);
    }
    m_one_gpu = worker.info().cuda.ordinal == primary.info().cuda.ordinal;
    const std::string base = worker.label() + "->" + primary.label() + " CUDA staging";
    m_worker_staging =
        create_exportable_buffer(worker, layout.total_bytes, base + " (worker)", k_other_paths);
    m_primary_staging =
        create_exportable_buffer(primary, layout.total_bytes, base + " (primary)", k_other_paths);

    const CudaDriver& cuda = cuda_driver();
    m_worker_gpu = std::make_unique<CudaGpu>(cuda, worker.info().cuda.ordinal);
    if (!m_one_gpu) {
        m_primary_gpu = std::make_unique<CudaGpu>(cuda, primary.info().cuda.ordinal);
        m_worker_gpu->enable_peer_access(*m_primary_gpu);
    }
    const CudaGpu& primary_gpu = m_one_gpu ? *m_worker_gpu : *m_primary_gpu;
    m_worker_mapped = std::make_unique<CudaImportedBuffer>(
        *m_worker_gpu, export_memory_fd(worker, m_worker_staging.memory.get(), base, k_other_paths),
        m_worker_staging.allocation, layout.total_bytes, true);
    m_primary_mapped = std::make_unique<CudaImportedBuffer>(
        primary_gpu, export_memory_fd(primary, m_primary_staging.memory.get(), base, k_other_paths),
        m_primary_staging.allocation, layout.total_bytes, true);
    if (!m_one_gpu) {
        m_bounce = std::make_unique<CudaMemory>(*m_primary_gpu, layout.total_bytes);
    }
}

CudaPeerPath::~CudaPeerPath() = default;

void CudaPeerPath::record_worker_band(VkCommandBuffer cmd, std::uint32_t slot, const Band& band,
                                      VkImage image, VkImageLayout layout) const {
    const VkBufferImageCopy region =
        record_band_download(cmd, m_worker_staging.buffer.get(), slot, band, image, layout);
    // Released to CUDA, which reads it once the band's submission completed.
    buffer_barrier(cmd, m_worker_staging.buffer.get(), region.bufferOffset, band.bytes,
                   VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                   VK_PIPELINE_STAGE_2_NONE, VK_ACCESS_2_NONE, copy_queue(worker()).family(),
                   VK_QUEUE_FAMILY_EXTERNAL);
}

std::string CudaPeerPath::copy(VkDeviceSize offset, VkDeviceSize bytes) const {
    // Fault injection (core/vk_check.hpp) stands for a CUDA error here, for the tests.
    if (const VkResult injected = vk_status(VK_SUCCESS, "CUDA copy cuda-peer");
        injected != VK_SUCCESS) {
        return std::string("an injected fault (") + tandem::to_string(injected) +
               ") in place of a CUDA error";
    }
    const CudaDriver& cuda = m_worker_gpu->driver();
    const cuda::CUdeviceptr from = m_worker_mapped->pointer() + offset;
    const cuda::CUdeviceptr to = m_primary_mapped->pointer() + offset;
    const auto run = [&](const CudaGpu& gpu, const char* call, auto&& issue) -> std::string {
        if (const cuda::CUresult r = gpu.make_current(); r != cuda::CUDA_SUCCESS) {
            return cuda.describe("cuCtxSetCurrent", r);
        }
        if (const cuda::CUresult r = issue(); r != cuda::CUDA_SUCCESS) {
            return cuda.describe(call, r);
        }
        if (const cuda::CUresult r = cuda.cuStreamSynchronize(gpu.stream());
            r != cuda::CUDA_SUCCESS) {
            return cuda.describe("cuStreamSynchronize", r);
        }
        return {};
    };
    if (m_one_gpu) {
        return run(*m_worker_gpu, "cuMemcpyDtoDAsync",
                   [&] { return cuda.cuMemcpyDtoDAsync(to, from, bytes, m_worker_gpu->stream()); });
    }
    const cuda::CUdeviceptr bounce = m_bounce->pointer() + offset;
    std::string why = run(*m_worker_gpu, "cuMemcpyPeerAsync", [&] {
        return cuda.cuMemcpyPeerAsync(bounce, m_primary_gpu->context(), from,
                                      m_worker_gpu->context(), bytes, m_worker_gpu->stream());
    });
    if (!why.empty()) {
        return why;
    }
    return run(*m_primary_gpu, "cuMemcpyDtoDAsync",
               [&] { return cuda.cuMemcpyDtoDAsync(to, bounce, bytes, m_primary_gpu->stream()); });
}

VkResult CudaPeerPath::host_step(std::uint32_t slot, const Band& band) const noexcept {
    std::string why;
    try {
        why = copy(layout().slot_offset(slot) + band.offset, band.bytes);
        if (why.empty()) {
            return VK_SUCCESS;
        }
    } catch (const std::exception& e) { // only std::bad_alloc, from the message
        why = e.what();
    }
    try {
        std::lock_guard lock(m_error_mutex);
        m_error = "the CUDA copy between the GPUs failed: " + why;
    } catch (...) {
        // The result still says it failed.
    }
    return VK_ERROR_UNKNOWN;
}

std::string CudaPeerPath::host_step_error() const {
    std::lock_guard lock(m_error_mutex);
    return m_error;
}

void CudaPeerPath::record_primary_band(VkCommandBuffer cmd, std::uint32_t slot, const Band& band,
                                       VkImage image) const {
    const VkBufferImageCopy region = band_region(slot, band);
    // Acquired from CUDA, whose copy the bridge saw complete before this submission was let go.
    buffer_barrier(cmd, m_primary_staging.buffer.get(), region.bufferOffset, band.bytes,
                   VK_PIPELINE_STAGE_2_NONE, VK_ACCESS_2_NONE, VK_PIPELINE_STAGE_2_COPY_BIT,
                   VK_ACCESS_2_TRANSFER_READ_BIT, VK_QUEUE_FAMILY_EXTERNAL,
                   copy_queue(primary()).family());
    vkCmdCopyBufferToImage(cmd, m_primary_staging.buffer.get(), image,
                           VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
}

} // namespace tandem::detail
