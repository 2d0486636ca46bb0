#include "transfer/cuda_peer_path.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <thread>

#include "core/log.hpp"
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

// CUDA's stream of the copies (StreamHandOff), on streams of its own. Two GPUs: the worker GPU's
// stream waits for the worker timeline (imported there), peer-copies into the bounce memory on
// the primary GPU and records an event; the primary GPU's stream waits for the event, copies
// into the primary's staging and signals the gate (imported there). One GPU: one stream waits,
// copies and signals. Every call keeps the calling thread's CUDA context as it was.
class CudaStagingStream final : public StagingStream {
public:
    struct Memory {
        cuda::CUdeviceptr from = 0;   // the worker's staging, on the worker GPU
        cuda::CUdeviceptr to = 0;     // the primary's staging, on the primary GPU
        cuda::CUdeviceptr bounce = 0; // two GPUs: cuMemAlloc memory on the primary GPU
    };
    // `primary_gpu` null: one GPU. Throws Error when CUDA refuses a stream or an import.
    CudaStagingStream(const CudaGpu& worker_gpu, const CudaGpu* primary_gpu, Memory memory,
                      const TimelineSemaphore& worker_timeline, TimelineSemaphore& gate)
        : m_worker_gpu(worker_gpu), m_primary_gpu(primary_gpu), m_memory(memory),
          m_worker_stream(worker_gpu) {
        if (m_primary_gpu != nullptr) {
            m_primary_stream = std::make_unique<CudaStream>(*m_primary_gpu);
            m_event = std::make_unique<CudaEvent>(worker_gpu);
        }
        m_worker_wait =
            std::make_unique<CudaImportedTimeline>(worker_gpu, worker_timeline.export_fd());
        m_gate = std::make_unique<CudaImportedTimeline>(gate_gpu(), gate.export_fd());
    }

    ~CudaStagingStream() override {
        if (!finish(std::chrono::milliseconds(0))) {
            // A wait on the worker that never came: CUDA still holds the imported timelines, so
            // they are left to the process rather than destroyed under pending work.
            log_error("transfer", "CUDA's copies are still waiting for the worker at the link's "
                                  "end; their timeline imports are left alive");
            (void)m_worker_wait.release();
            (void)m_gate.release();
        }
    }

    [[nodiscard]] std::string enqueue(VkDeviceSize offset, VkDeviceSize bytes, std::uint64_t after,
                                      std::uint64_t signal) noexcept override {
        try {
            {
                // The error a query saw (the hand-off polls once per transfer, not per band).
                std::lock_guard lock(m_error_mutex);
                if (!m_error.empty()) {
                    return m_error;
                }
            }
            return enqueue_or_describe(offset, bytes, after, signal);
        } catch (const std::exception& e) { // std::bad_alloc, from a message
            return e.what();
        }
    }

    [[nodiscard]] std::string poll() noexcept override {
        try {
            (void)done();
            std::lock_guard lock(m_error_mutex);
            return m_error;
        } catch (...) {
            return "CUDA's copies could not be queried";
        }
    }

    [[nodiscard]] bool finish(std::chrono::milliseconds timeout) noexcept override {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (!done()) {
            if (std::chrono::steady_clock::now() >= deadline) {
                return false;
            }
            std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
        return true;
    }

private:
    [[nodiscard]] const CudaGpu& gate_gpu() const noexcept {
        return m_primary_gpu != nullptr ? *m_primary_gpu : m_worker_gpu;
    }

    // True when nothing queued is pending on either stream, or a copy failed (m_error).
    [[nodiscard]] bool done() noexcept {
        std::lock_guard lock(m_error_mutex);
        if (!m_error.empty()) {
            return true;
        }
        const CudaDriver& cuda = m_worker_gpu.driver();
        bool idle = true;
        const auto query = [&](const CudaGpu& gpu, cuda::CUstream stream) {
            const CudaContextScope scope(gpu);
            const cuda::CUresult r = cuda.cuStreamQuery(stream);
            if (r == cuda::CUDA_ERROR_NOT_READY) {
                idle = false;
            } else if (r != cuda::CUDA_SUCCESS && m_error.empty()) {
                m_error = safe_describe(cuda, "a queued CUDA copy (cuStreamQuery)", r);
            }
        };
        query(m_worker_gpu, m_worker_stream.handle());
        if (m_primary_stream) {
            query(*m_primary_gpu, m_primary_stream->handle());
        }
        return idle || !m_error.empty();
    }

    [[nodiscard]] static std::string safe_describe(const CudaDriver& cuda, const char* call,
                                                   cuda::CUresult r) noexcept {
        try {
            return cuda.describe(call, r);
        } catch (...) {
            return "CUDA failed";
        }
    }

    [[nodiscard]] std::string enqueue_or_describe(VkDeviceSize offset, VkDeviceSize bytes,
                                                  std::uint64_t after, std::uint64_t signal) {
        const CudaDriver& cuda = m_worker_gpu.driver();
        std::string why;
        const auto ok = [&](const char* call, cuda::CUresult r) {
            if (r != cuda::CUDA_SUCCESS) {
                why = cuda.describe(call, r);
            }
            return why.empty();
        };
        cuda::CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS wait{};
        wait.params.fence.value = after;
        cuda::CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS raise{};
        raise.params.fence.value = signal;
        const cuda::CUexternalSemaphore worker = m_worker_wait->handle();
        const cuda::CUexternalSemaphore gate = m_gate->handle();
        const cuda::CUdeviceptr from = m_memory.from + offset;
        const cuda::CUdeviceptr to = m_memory.to + offset;
        const cuda::CUstream first = m_worker_stream.handle();
        {
            const CudaContextScope scope(m_worker_gpu);
            if (!ok("cuCtxSetCurrent", scope.result()) ||
                !ok("cuWaitExternalSemaphoresAsync",
                    cuda.cuWaitExternalSemaphoresAsync(&worker, &wait, 1, first))) {
                return why;
            }
            if (m_primary_gpu == nullptr) {
                (void)(ok("cuMemcpyDtoDAsync", cuda.cuMemcpyDtoDAsync(to, from, bytes, first)) &&
                       ok("cuSignalExternalSemaphoresAsync",
                          cuda.cuSignalExternalSemaphoresAsync(&gate, &raise, 1, first)));
                return why;
            }
            const cuda::CUdeviceptr bounce = m_memory.bounce + offset;
            if (!ok("cuMemcpyPeerAsync",
                    cuda.cuMemcpyPeerAsync(bounce, m_primary_gpu->context(), from,
                                           m_worker_gpu.context(), bytes, first)) ||
                !ok("cuEventRecord", cuda.cuEventRecord(m_event->handle(), first))) {
                return why;
            }
        }
        const CudaContextScope scope(*m_primary_gpu);
        const cuda::CUstream second = m_primary_stream->handle();
        (void)(ok("cuCtxSetCurrent", scope.result()) &&
               ok("cuStreamWaitEvent", cuda.cuStreamWaitEvent(second, m_event->handle(), 0)) &&
               ok("cuMemcpyDtoDAsync",
                  cuda.cuMemcpyDtoDAsync(to, m_memory.bounce + offset, bytes, second)) &&
               ok("cuSignalExternalSemaphoresAsync",
                  cuda.cuSignalExternalSemaphoresAsync(&gate, &raise, 1, second)));
        return why;
    }

    const CudaGpu& m_worker_gpu;
    const CudaGpu* m_primary_gpu; // null on one GPU
    Memory m_memory;
    CudaStream m_worker_stream;
    std::unique_ptr<CudaStream> m_primary_stream; // two GPUs
    std::unique_ptr<CudaEvent> m_event;           // two GPUs: the peer copy done
    std::unique_ptr<CudaImportedTimeline> m_worker_wait;
    std::unique_ptr<CudaImportedTimeline> m_gate;
    std::mutex m_error_mutex;
    std::string m_error; // the first failure a query saw; sticky; guarded by m_error_mutex
};

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

    [[nodiscard]] std::unique_ptr<StagingStream> stream(const TimelineSemaphore& worker_timeline,
                                                        TimelineSemaphore& gate) const override {
        CudaStagingStream::Memory memory;
        memory.from = m_worker_mapped->pointer();
        memory.to = m_primary_mapped->pointer();
        memory.bounce = m_bounce ? m_bounce->pointer() : 0;
        return std::make_unique<CudaStagingStream>(*m_worker_gpu, m_primary_gpu.get(), memory,
                                                   worker_timeline, gate);
    }
    [[nodiscard]] bool stream_signals_from_host() const noexcept override { return false; }

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

std::string injected_cuda_copy_fault(VkResult& result) {
    result = vk_status(VK_SUCCESS, "CUDA copy cuda-peer");
    if (result == VK_SUCCESS) {
        return {};
    }
    return std::string("an injected fault (") + tandem::to_string(result) +
           ") in place of a CUDA error";
}

std::string cuda_copy_failure(const std::string& why) {
    return "the CUDA copy between the GPUs failed: " + why;
}

VkResult CudaPeerPath::host_step(std::uint32_t slot, const Band& band) const noexcept {
    try {
        VkResult injected = VK_SUCCESS;
        std::string why = injected_cuda_copy_fault(injected);
        if (why.empty()) {
            why = m_copier->copy(layout().slot_offset(slot) + band.offset, band.bytes);
            if (why.empty()) {
                return VK_SUCCESS;
            }
        }
        std::lock_guard lock(m_error_mutex);
        m_error = cuda_copy_failure(why);
    } catch (...) {
        // The result still says it failed.
    }
    return VK_ERROR_UNKNOWN;
}

std::unique_ptr<StagingStream> CudaPeerPath::make_stream(const TimelineSemaphore& worker_timeline,
                                                         TimelineSemaphore& gate) const {
    return m_copier->stream(worker_timeline, gate);
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
