#include "transfer/cuda_peer_check.hpp"

#include <chrono>
#include <cstring>

#include "core/cuda_driver.hpp"
#include "core/resources.hpp"
#include "core/vk_check.hpp"
#include "sync/timeline_semaphore.hpp"
#include "tandem/error.hpp"
#include "transfer/cuda_interop.hpp"
#include "transfer/opaque_fd_memory.hpp"

namespace tandem::detail {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto k_wait = std::chrono::seconds(10);
constexpr VkFormat k_format = VK_FORMAT_R8G8B8A8_UNORM;
VkBufferImageCopy whole(std::uint32_t width, std::uint32_t height) {
    VkBufferImageCopy region{};
    region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.imageExtent = {width, height, 1};
    return region;
}

// Writes `bytes` into `image` through a host-visible buffer, leaving it in `layout` (blocking).
void upload(const Device& device, const Image& image, const std::vector<std::uint8_t>& bytes,
            VkImageLayout layout) {
    Buffer staging =
        create_buffer(device, {bytes.size(), VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                               VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, 0, "CUDA check upload"});
    std::memcpy(staging.mapped, bytes.data(), bytes.size());
    flush_buffer(device, staging);
    submit_and_wait(device, QueueRole::Main, [&](VkCommandBuffer cmd) {
        image_barrier(cmd, image.get(), VK_IMAGE_LAYOUT_UNDEFINED,
                      VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                      VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT,
                      VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
        const VkBufferImageCopy region = whole(image.extent.width, image.extent.height);
        vkCmdCopyBufferToImage(cmd, staging.get(), image.get(),
                               VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
        image_barrier(cmd, image.get(), VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, layout,
                      VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                      VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                      VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT);
    });
}

// The tightly packed contents of `image` (in SHADER_READ_ONLY_OPTIMAL, left there; blocking).
std::vector<std::uint8_t> read_back(const Device& device, const Image& image, std::size_t n) {
    Buffer staging = create_buffer(
        device, {n, VK_BUFFER_USAGE_TRANSFER_DST_BIT, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
                 VK_MEMORY_PROPERTY_HOST_CACHED_BIT, "CUDA check readback"});
    const VkImageLayout read = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
    submit_and_wait(device, QueueRole::Main, [&](VkCommandBuffer cmd) {
        image_barrier(cmd, image.get(), read, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                      VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_MEMORY_WRITE_BIT,
                      VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_READ_BIT);
        const VkBufferImageCopy region = whole(image.extent.width, image.extent.height);
        vkCmdCopyImageToBuffer(cmd, image.get(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                               staging.get(), 1, &region);
        image_barrier(cmd, image.get(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, read,
                      VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_NONE,
                      VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_MEMORY_READ_BIT);
        buffer_barrier(cmd, staging.get(), 0, VK_WHOLE_SIZE, VK_PIPELINE_STAGE_2_COPY_BIT,
                       VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_HOST_BIT,
                       VK_ACCESS_2_HOST_READ_BIT);
    });
    invalidate_buffer(device, staging);
    const auto* data = static_cast<const std::uint8_t*>(staging.mapped);
    return {data, data + n};
}

Image check_image(const Device& device, std::uint32_t width, std::uint32_t height,
                  const std::string& name) {
    ImageDesc desc;
    desc.width = width;
    desc.height = height;
    desc.format = k_format;
    desc.usage = VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT |
                 VK_IMAGE_USAGE_SAMPLED_BIT;
    desc.name = name;
    desc.queue_families = {device.queue(QueueRole::Main).family(),
                           device.queue(QueueRole::Transfer).family()};
    return create_image(device, desc);
}

VkResult begin(VkCommandBuffer cmd) {
    VkCommandBufferBeginInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    return vkBeginCommandBuffer(cmd, &info);
}

// The worker's copy of `source` into its exported buffer, released to CUDA (the external family).
void record_worker_copy(VkCommandBuffer cmd, const Image& source, VkBuffer buffer,
                        std::uint32_t family, const VkBufferImageCopy& region) {
    vk_check(begin(cmd), "vkBeginCommandBuffer CUDA check worker");
    vkCmdCopyImageToBuffer(cmd, source.get(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, buffer, 1,
                           &region);
    buffer_barrier(cmd, buffer, 0, VK_WHOLE_SIZE, VK_PIPELINE_STAGE_2_COPY_BIT,
                   VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_NONE, VK_ACCESS_2_NONE,
                   family, VK_QUEUE_FAMILY_EXTERNAL);
    vk_check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer CUDA check worker");
}

// The primary's acquire of its exported buffer from CUDA, and its copy into `target`, left for
// sampling.
void record_primary_copy(VkCommandBuffer cmd, VkBuffer buffer, const Image& target,
                         std::uint32_t family, const VkBufferImageCopy& region) {
    vk_check(begin(cmd), "vkBeginCommandBuffer CUDA check primary");
    buffer_barrier(cmd, buffer, 0, VK_WHOLE_SIZE, VK_PIPELINE_STAGE_2_NONE, VK_ACCESS_2_NONE,
                   VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_READ_BIT,
                   VK_QUEUE_FAMILY_EXTERNAL, family);
    image_barrier(cmd, target.get(), VK_IMAGE_LAYOUT_UNDEFINED,
                  VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                  VK_ACCESS_2_NONE, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
    vkCmdCopyBufferToImage(cmd, buffer, target.get(), VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1,
                           &region);
    image_barrier(cmd, target.get(), VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                  VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, VK_PIPELINE_STAGE_2_COPY_BIT,
                  VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                  VK_ACCESS_2_MEMORY_READ_BIT);
    vk_check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer CUDA check primary");
}

void check(CudaPeerCheck& out, const Device& worker, const Device& primary, std::uint32_t width,
           std::uint32_t height) {
    const CudaDriver& cuda = cuda_driver();
    const VkDeviceSize bytes = VkDeviceSize{width} * height * 4;
    out.bytes = bytes;

    // Vulkan: the images, the exported buffers and timelines, one command buffer per side.
    const Image source = check_image(worker, width, height, "CUDA check source");
    const Image target = check_image(primary, width, height, "CUDA check target");
    const ExportableBuffer worker_buffer =
        create_exportable_buffer(worker, bytes, "CUDA check worker buffer");
    const ExportableBuffer primary_buffer =
        create_exportable_buffer(primary, bytes, "CUDA check primary buffer");
    TimelineSemaphore worker_done(worker, "CUDA check worker timeline", 0, true);
    // Signalled with worker_done and waited on instead: the validation layer does not count a
    // wait on the exported timeline as the worker's submission completing.
    TimelineSemaphore worker_copied(worker, "CUDA check worker copy");
    TimelineSemaphore cuda_done(primary, "CUDA check primary timeline (CUDA-signalled)", 0, true);
    TimelineSemaphore primary_done(primary, "CUDA check primary copy");
    const std::uint32_t worker_family = worker.queue(QueueRole::Transfer).family();
    const std::uint32_t primary_family = primary.queue(QueueRole::Transfer).family();
    const CommandPool worker_pool(worker, worker_family, "CUDA check worker");
    const CommandPool primary_pool(primary, primary_family, "CUDA check primary");
    const VkCommandBuffer worker_cmd = worker_pool.allocate("CUDA check worker copy");
    const VkCommandBuffer primary_cmd = primary_pool.allocate("CUDA check primary copy");
    const VkBufferImageCopy region = whole(width, height);
    record_worker_copy(worker_cmd, source, worker_buffer.buffer.get(), worker_family, region);
    record_primary_copy(primary_cmd, primary_buffer.buffer.get(), target, primary_family, region);
    // Whatever happens below, both devices finish before the objects above are destroyed (after
    // the CUDA objects below are released).
    struct Settle {
        const Device& worker;
        const Device& primary;
        ~Settle() {
            (void)worker.settle(k_wait);
            (void)primary.settle(k_wait);
        }
    } settle{worker, primary};

    // CUDA, each GPU with its own imports; declared after the Vulkan objects, so released first.
    const CudaGpu on_worker(cuda, worker.info().cuda.ordinal);
    const CudaGpu on_primary(cuda, primary.info().cuda.ordinal);
    const CudaImportedBuffer worker_mapped(
        on_worker, export_memory_fd(worker, worker_buffer.memory.get(), "CUDA check worker buffer"),
        worker_buffer.allocation, bytes, true);
    const CudaImportedTimeline worker_semaphore(on_worker, worker_done.export_fd());
    const CudaMemory native(on_worker, bytes); // the source of the plain copy
    if (!out.one_gpu) {
        on_worker.enable_peer_access(on_primary);
    }
    const CudaImportedBuffer primary_mapped(
        on_primary,
        export_memory_fd(primary, primary_buffer.memory.get(), "CUDA check primary buffer"),
        primary_buffer.allocation, bytes, true);
    const CudaImportedTimeline primary_semaphore(on_primary, cuda_done.export_fd());
    const CudaMemory bounce(on_primary, bytes);

    const auto fail = [&](VkResult result, const std::string& what) {
        throw Error(result, what, "Run it again with --validation core to see what Vulkan says");
    };
    for (std::uint32_t run = 0; run < out.runs; ++run) {
        const std::uint64_t value = run + 1;
        std::vector<std::uint8_t> data(bytes);
        for (std::size_t i = 0; i < data.size(); ++i) {
            data[i] = static_cast<std::uint8_t>(i * 31u + (i >> 12) + value * 7u);
        }
        upload(worker, source, data, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
        upload(primary, target, std::vector<std::uint8_t>(bytes, 0xCD),
               VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);

        // The primary's side first: it waits GPU-side for CUDA's signal.
        const VkSemaphoreSubmitInfo cuda_wait =
            cuda_done.submit_info(value, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
        const VkSemaphoreSubmitInfo copied =
            primary_done.submit_info(value, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
        if (const VkResult r = primary.queue(QueueRole::Transfer)
                                   .submit_one(primary_cmd, {&cuda_wait, 1}, {&copied, 1});
            r != VK_SUCCESS) {
            fail(r, "submitting the primary's copy failed");
        }
        const auto t0 = Clock::now();
        const VkSemaphoreSubmitInfo written[] = {
            worker_done.submit_info(value, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT),
            worker_copied.submit_info(value, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT)};
        if (const VkResult r =
                worker.queue(QueueRole::Transfer).submit_one(worker_cmd, {}, written);
            r != VK_SUCCESS) {
            fail(r, "submitting the worker's copy failed");
        }
        // Worker GPU: wait for Vulkan's value, peer-copy into CUDA memory on the primary GPU.
        cu_check(cuda, on_worker.make_current(), "cuCtxSetCurrent");
        cuda::CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS wait{};
        wait.params.fence.value = value;
        const cuda::CUexternalSemaphore worker_wait = worker_semaphore.handle();
        cu_check(cuda,
                 cuda.cuWaitExternalSemaphoresAsync(&worker_wait, &wait, 1, on_worker.stream()),
                 "cuWaitExternalSemaphoresAsync");
        cu_check(cuda,
                 cuda.cuMemcpyPeerAsync(bounce.pointer(), on_primary.context(),
                                        worker_mapped.pointer(), on_worker.context(), bytes,
                                        on_worker.stream()),
                 "cuMemcpyPeerAsync");
        cu_check(cuda, cuda.cuStreamSynchronize(on_worker.stream()), "cuStreamSynchronize");
        // Seen by the worker's Vulkan side too, so its command buffer may be submitted again.
        if (const VkResult r = worker_copied.wait(value, k_wait); r != VK_SUCCESS) {
            fail(r, "the worker's copy did not complete within 10 s");
        }
        // Primary GPU: into the primary's imported buffer, then signal Vulkan's timeline.
        cu_check(cuda, on_primary.make_current(), "cuCtxSetCurrent");
        cu_check(cuda,
                 cuda.cuMemcpyDtoDAsync(primary_mapped.pointer(), bounce.pointer(), bytes,
                                        on_primary.stream()),
                 "cuMemcpyDtoDAsync");
        cuda::CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS signal{};
        signal.params.fence.value = value;
        const cuda::CUexternalSemaphore primary_signal = primary_semaphore.handle();
        cu_check(
            cuda,
            cuda.cuSignalExternalSemaphoresAsync(&primary_signal, &signal, 1, on_primary.stream()),
            "cuSignalExternalSemaphoresAsync");
        // Polled: a blocking wait on a CUDA-signalled timeline woke ~10 ms late on the H200s.
        if (const VkResult r = primary_done.wait(value, k_wait); r != VK_SUCCESS) {
            fail(r, "the primary's copy did not complete within 10 s");
        }
        out.chain_us.push_back(
            std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
        if (read_back(primary, target, bytes) != data) {
            out.reason = "run " + std::to_string(run) +
                         ": the primary image differs from the worker's after the CUDA path";
            return;
        }
        // The peer copy alone, once more, for its rate; then the same copy between two
        // cuMemAlloc buffers, the plain CUDA copy the path's own step is compared with.
        cu_check(cuda, on_worker.make_current(), "cuCtxSetCurrent");
        const auto timed_copy = [&](cuda::CUdeviceptr from) {
            const auto p0 = Clock::now();
            cu_check(cuda,
                     cuda.cuMemcpyPeerAsync(bounce.pointer(), on_primary.context(), from,
                                            on_worker.context(), bytes, on_worker.stream()),
                     "cuMemcpyPeerAsync");
            cu_check(cuda, cuda.cuStreamSynchronize(on_worker.stream()), "cuStreamSynchronize");
            return std::chrono::duration<double, std::micro>(Clock::now() - p0).count();
        };
        const double peer_us = timed_copy(worker_mapped.pointer());
        const double plain_us = timed_copy(native.pointer());
        out.peer_gbps.push_back(static_cast<double>(bytes) / peer_us / 1e3);
        out.plain_us.push_back(plain_us);
        out.plain_gbps.push_back(static_cast<double>(bytes) / plain_us / 1e3);
    }
    out.verified = true;
}

} // namespace

CudaPeerCheck run_cuda_peer_check(const Device& worker, const Device& primary, const PairInfo& pair,
                                  std::uint32_t width, std::uint32_t height, std::uint32_t runs,
                                  bool one_gpu_too) {
    CudaPeerCheck out;
    out.runs = runs;
    const DeviceInfo& w = worker.info();
    const DeviceInfo& p = primary.info();
    out.one_gpu = one_gpu_too && w.index != p.index && w.cuda.present && p.cuda.present &&
                  w.cuda.ordinal == p.cuda.ordinal;
    if (!pair.cuda_peer.present && !out.one_gpu) {
        out.reason = pair.cuda_peer.reason;
        return out;
    }
    for (const Device* d : {&worker, &primary}) {
        if (!d->info().features.external_semaphore_fd_timeline ||
            !d->info().features.external_memory_fd) {
            out.reason = d->info().name + " lacks opaque-fd timeline semaphores or memory";
            return out;
        }
    }
    out.ran = true;
    try {
        check(out, worker, primary, width, height);
    } catch (const std::exception& e) {
        out.verified = false;
        out.reason = e.what();
    }
    return out;
}

} // namespace tandem::detail
