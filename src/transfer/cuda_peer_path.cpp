#include "transfer/cuda_peer_path.hpp"

#include <algorithm>
#include <exception>

#include "core/resources.hpp"
#include "core/vk_check.hpp"
#include "tandem/error.hpp"
#include "transfer/cuda_interop.hpp"
#include "transfer/link_copy_queue.hpp"

namespace tandem::detail {
namespace {

constexpr const char* k_other_paths = "Use the host-imported or host-copy path";

// Why `worker` and `primary` cannot copy with CUDA (one sentence), or empty.
std::string cuda_refusal(const Device& worker, const Device& primary) {
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
    if (w.cuda.ordinal != p.cuda.ordinal &&
        std::find(w.cuda.peers.begin(), w.cuda.peers.end(), p.device_uuid) == w.cuda.peers.end()) {
        return "CUDA reports no peer access from device " + std::to_string(w.cuda.ordinal) +
               " to device " + std::to_string(p.cuda.ordinal) + " (cuDeviceCanAccessPeer)";
    }
    return {};
}

// CUDA's copy: each staging imported on its own GPU; between two GPUs a peer copy into
// cuMemAlloc memory on the primary's, then a copy within it; on one GPU one copy.
class CudaStagingCopier final : public StagingCopier {
public:
    CudaStagingCopier(const Device& worker, const ExportableBuffer& worker_staging,
                      const Device& primary, const ExportableBuffer& primary_staging,
                      VkDeviceSize bytes, const std::string& name) {
        if (std::string why = cuda_refusal(worker, primary); !why.empty()) {
            throw Error(VK_ERROR_FEATURE_NOT_PRESENT, why, k_other_paths);
        }
        const CudaDriver& cuda = cuda_driver();
        const bool one_gpu = worker.info().cuda.ordinal == primary.info().cuda.ordinal;
        m_worker_gpu = std::make_unique<CudaGpu>(cuda, worker.info().cuda.ordinal);
        if (!one_gpu) {
            m_primary_gpu = std::make_unique<CudaGpu>(cuda, primary.info().cuda.ordinal);
            m_worker_gpu->enable_peer_access(*m_primary_gpu);
        }
        const CudaGpu& primary_gpu = one_gpu ? *m_worker_gpu : *m_primary_gpu;
        m_worker_mapped = std::make_unique<CudaImportedBuffer>(
            *m_worker_gpu,
            export_memory_fd(worker, worker_staging.memory.get(), name, k_other_paths),
            worker_staging.allocation, bytes, true);
        m_primary_mapped = std::make_unique<CudaImportedBuffer>(
            primary_gpu,
            export_memory_fd(primary, primary_staging.memory.get(), name, k_other_paths),
            primary_staging.allocation, bytes, true);
        if (!one_gpu) {
            m_bounce = std::make_unique<CudaMemory>(*m_primary_gpu, bytes);
        }
    }

    [[nodiscard]] std::string copy(VkDeviceSize offset,
                                   VkDeviceSize bytes) const noexcept override {
        try {
            return copy_or_throw(offset, bytes);
        } catch (const std::exception& e) { // std::bad_alloc, from a message
            return e.what();
        }
    }

private:
    [[nodiscard]] std::string copy_or_throw(VkDeviceSize offset, VkDeviceSize bytes) const {
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
        if (!m_primary_gpu) {
            return run(*m_worker_gpu, "cuMemcpyDtoDAsync", [&] {
                return cuda.cuMemcpyDtoDAsync(to, from, bytes, m_worker_gpu->stream());
            });
        }
        const cuda::CUdeviceptr bounce = m_bounce->pointer() + offset;
        std::string why = run(*m_worker_gpu, "cuMemcpyPeerAsync", [&] {
            return cuda.cuMemcpyPeerAsync(bounce, m_primary_gpu->context(), from,
                                          m_worker_gpu->context(), bytes, m_worker_gpu->stream());
        });
        if (!why.empty()) {
            return why;
        }
        return run(*m_primary_gpu, "cuMemcpyDtoDAsync", [&] {
            return cuda.cuMemcpyDtoDAsync(to, bounce, bytes, m_primary_gpu->stream());
        });
    }

    // Released in reverse: the imports and the bounce before the contexts.
    std::unique_ptr<CudaGpu> m_worker_gpu;
    std::unique_ptr<CudaGpu> m_primary_gpu; // null on one GPU
    std::unique_ptr<CudaImportedBuffer> m_worker_mapped;
    std::unique_ptr<CudaImportedBuffer> m_primary_mapped;
    std::unique_ptr<CudaMemory> m_bounce; // on the primary GPU; null on one GPU
};

} // namespace

CudaPeerPath::CudaPeerPath(const Device& worker, const Device& primary, const StagingLayout& layout)
    : CudaPeerPath(worker, primary, layout,
                   [name = worker.label() + "->" + primary.label() + " CUDA staging"](
                       const Device& w, const ExportableBuffer& ws, const Device& p,
                       const ExportableBuffer& ps, VkDeviceSize bytes) {
                       return std::make_unique<CudaStagingCopier>(w, ws, p, ps, bytes, name);
                   }) {}

CudaPeerPath::CudaPeerPath(const Device& worker, const Device& primary, const StagingLayout& layout,
                           const StagingCopierFactory& make)
    : TransferPathBackend(worker, primary, layout) {
    if (worker.fn().get_memory_fd == nullptr || primary.fn().get_memory_fd == nullptr) {
        throw Error(VK_ERROR_EXTENSION_NOT_PRESENT,
                    "The CUDA path needs VK_KHR_external_memory_fd on both devices", k_other_paths);
    }
    const std::string base = worker.label() + "->" + primary.label() + " CUDA staging";
    m_worker_staging =
        create_exportable_buffer(worker, layout.total_bytes, base + " (worker)", k_other_paths);
    m_primary_staging =
        create_exportable_buffer(primary, layout.total_bytes, base + " (primary)", k_other_paths);
    m_copier = make(worker, m_worker_staging, primary, m_primary_staging, layout.total_bytes);
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

VkResult CudaPeerPath::host_step(std::uint32_t slot, const Band& band) const noexcept {
    std::string why;
    // Fault injection (core/vk_check.hpp) stands for a failed copy here, for the tests.
    if (const VkResult injected = vk_status(VK_SUCCESS, "CUDA copy cuda-peer");
        injected != VK_SUCCESS) {
        why = std::string("an injected fault (") + tandem::to_string(injected) +
              ") in place of a CUDA error";
    } else {
        why = m_copier->copy(layout().slot_offset(slot) + band.offset, band.bytes);
        if (why.empty()) {
            return VK_SUCCESS;
        }
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
