#include "pair_pipeline.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "core/resources.hpp"
#include "core/vk_check.hpp"
#include "sync/timeline_semaphore.hpp"
#include "tandem/error.hpp"
#include "transfer/link_copy_queue.hpp"
#include "transfer/transfer_path.hpp"

namespace tandem::bench {
namespace {

constexpr VkFormat k_format = VK_FORMAT_R8G8B8A8_UNORM;
constexpr auto k_stall = std::chrono::seconds(10); // no frame arriving for this long: a hang

detail::Image make_image(const detail::Device& device, VkExtent2D extent, const std::string& name) {
    detail::ImageDesc d;
    d.width = extent.width;
    d.height = extent.height;
    d.format = k_format;
    d.usage = VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT |
              VK_IMAGE_USAGE_SAMPLED_BIT;
    d.name = name;
    // The main queue fills and reads it back; the link's copy queue copies it.
    d.queue_families = {device.queue(detail::QueueRole::Main).family(),
                        detail::copy_queue(device).family()};
    return detail::create_image(device, d);
}

void begin(VkCommandBuffer cmd) {
    VkCommandBufferBeginInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    detail::vk_check(vkBeginCommandBuffer(cmd, &info), "vkBeginCommandBuffer pair pipeline");
}

void end(VkCommandBuffer cmd) {
    detail::vk_check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer pair pipeline");
}

std::uint64_t value_of(const detail::TimelineSemaphore& semaphore) {
    std::uint64_t v = 0;
    detail::vk_check(semaphore.value(v), "vkGetSemaphoreCounterValue pair pipeline");
    return v;
}

} // namespace

bool pair_pipeline_drives(TransferPath path) noexcept {
    return path == TransferPath::SharedMemory || path == TransferPath::HostImported ||
           path == TransferPath::HostCopy;
}

PairPipeline measure_pair_pipeline(const detail::Device& sender, const detail::Device& receiver,
                                   const PairInfo& pair, TransferPath path, VkExtent2D extent,
                                   std::uint32_t slots, std::uint32_t frames, std::uint32_t runs) {
    if (!pair_pipeline_drives(path)) {
        throw Error(std::string("The pair pipeline does not drive the ") + to_string(path) +
                        " path",
                    "Measure a path that copies through staging: shared-memory, host-imported "
                    "or host-copy");
    }
    const detail::StagingLayout layout = detail::staging_layout_for(
        sender.info(), receiver.info(), extent.width, extent.height, k_format, slots,
        extent.height); // one band: the whole frame
    const std::unique_ptr<detail::TransferPathBackend> backend =
        detail::make_transfer_path(path, sender, receiver, layout);
    const detail::Band band = layout.band(0);
    const std::string name = sender.label() + "->" + receiver.label() + " pair pipeline";

    const detail::Image source = make_image(sender, extent, name + " source");
    const std::vector<std::uint8_t> bytes =
        pattern(std::size_t{extent.width} * extent.height * 4, 17);
    upload_image(sender, source.get(), extent, k_format, bytes,
                 VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
    // A target per slot, as a consumer that reads each frame while the next arrives needs (one
    // target for every frame would stay in the CPU's caches where the receiver is a CPU device).
    std::vector<detail::Image> targets;
    for (std::uint32_t s = 0; s < slots; ++s) {
        targets.push_back(make_image(receiver, extent, name + " target"));
        poison_image(receiver, targets.back().get(), VK_IMAGE_LAYOUT_UNDEFINED,
                     VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL);
    }

    const detail::Queue& send_queue = detail::copy_queue(sender);
    const detail::Queue& receive_queue = detail::copy_queue(receiver);
    const detail::CommandPool send_pool(sender, send_queue.family(), name + " sender");
    const detail::CommandPool receive_pool(receiver, receive_queue.family(), name + " receiver");
    std::vector<VkCommandBuffer> sends;
    std::vector<VkCommandBuffer> receives;
    for (std::uint32_t s = 0; s < slots; ++s) {
        VkCommandBuffer send = send_pool.allocate(name + " send");
        begin(send);
        backend->record_worker_band(send, s, band, source.get(),
                                    VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
        end(send);
        sends.push_back(send);
        VkCommandBuffer receive = receive_pool.allocate(name + " receive");
        begin(receive);
        // Each frame's copy into the target follows the last one's.
        const VkImage target = targets[s].get();
        detail::image_barrier(receive, target, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                              VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_2_COPY_BIT,
                              VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_COPY_BIT,
                              VK_ACCESS_2_TRANSFER_WRITE_BIT);
        backend->record_primary_band(receive, s, band, target);
        end(receive);
        receives.push_back(receive);
    }

    PairPipeline out;
    out.gpu_side = pair.gpu_side_sync && !backend->has_host_step();
    detail::TimelineSemaphore sent(sender, name + " sent", 0, out.gpu_side);
    detail::TimelineSemaphore arrived(receiver, name + " arrived", 0, out.gpu_side);
    std::optional<detail::TimelineSemaphore> sent_seen;    // on the receiver
    std::optional<detail::TimelineSemaphore> arrived_seen; // on the sender
    if (out.gpu_side) {
        sent_seen.emplace(detail::TimelineSemaphore::import_from(receiver, sent, name + " sent"));
        arrived_seen.emplace(
            detail::TimelineSemaphore::import_from(sender, arrived, name + " arrived"));
    }

    constexpr VkPipelineStageFlags2 k_all = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
    std::uint64_t base = 0; // the timelines' value before this run's first frame
    std::vector<double> gbps;
    std::vector<double> rates;
    const std::uint64_t warm = std::max<std::uint64_t>(1, frames / 10);
    for (std::uint32_t run = 0; run < runs + 1; ++run) { // the first run warms up
        std::uint64_t next_send = 0;                     // frames, counted from base
        std::uint64_t next_receive = 0;
        std::optional<Clock::time_point> warm_at;
        std::uint64_t warm_frames = 0;
        auto last_progress = Clock::now();
        std::uint64_t last_arrived = 0;
        for (;;) {
            const std::uint64_t got = value_of(arrived) - base;
            const auto now = Clock::now();
            if (!warm_at && got >= warm) {
                warm_at = now;
                warm_frames = got;
            }
            if (got >= frames) {
                if (run > 0) {
                    const double seconds = std::chrono::duration<double>(now - *warm_at).count();
                    const double done = static_cast<double>(got - warm_frames);
                    rates.push_back(done / seconds);
                    gbps.push_back(done * static_cast<double>(bytes.size()) / seconds / 1e9);
                }
                break;
            }
            if (got != last_arrived) {
                last_arrived = got;
                last_progress = now;
            } else if (now - last_progress > k_stall) {
                throw Error(VK_TIMEOUT,
                            "No frame of the pair pipeline arrived on " + receiver.label() +
                                " for 10 s",
                            "The devices may be hung; check the drivers");
            }
            if (out.gpu_side) {
                // Everything ahead, the GPUs ordering it; at most two rings' worth queued.
                while (next_send < frames && next_send < got + 2 * std::uint64_t{slots}) {
                    const std::uint64_t v = base + next_send + 1;
                    const std::uint32_t slot = static_cast<std::uint32_t>(v % slots);
                    const VkSemaphoreSubmitInfo free = arrived_seen->submit_info(
                        v > slots ? v - slots : 0, k_all); // the slot's last frame was read
                    const VkSemaphoreSubmitInfo send_done = sent.submit_info(v, k_all);
                    detail::vk_check(
                        send_queue.submit_one(sends[slot], {&free, 1}, {&send_done, 1}),
                        "vkQueueSubmit2 pair pipeline send");
                    const VkSemaphoreSubmitInfo ready = sent_seen->submit_info(v, k_all);
                    const VkSemaphoreSubmitInfo landed = arrived.submit_info(v, k_all);
                    detail::vk_check(
                        receive_queue.submit_one(receives[slot], {&ready, 1}, {&landed, 1}),
                        "vkQueueSubmit2 pair pipeline receive");
                    ++next_send;
                }
                continue;
            }
            // The host hands each side on the moment it may.
            if (next_send < frames && next_send < got + slots) { // its slot was read
                const std::uint64_t v = base + next_send + 1;
                const VkSemaphoreSubmitInfo send_done = sent.submit_info(v, k_all);
                detail::vk_check(send_queue.submit_one(sends[v % slots], {}, {&send_done, 1}),
                                 "vkQueueSubmit2 pair pipeline send");
                ++next_send;
            }
            if (next_receive < next_send && value_of(sent) >= base + next_receive + 1) {
                const std::uint64_t v = base + next_receive + 1;
                const auto slot = static_cast<std::uint32_t>(v % slots);
                detail::vk_check(backend->host_step(slot, band), "the path's host step");
                const VkSemaphoreSubmitInfo landed = arrived.submit_info(v, k_all);
                detail::vk_check(receive_queue.submit_one(receives[slot], {}, {&landed, 1}),
                                 "vkQueueSubmit2 pair pipeline receive");
                ++next_receive;
            }
        }
        base += frames;
    }
    detail::vk_check(receive_queue.wait_idle(), "vkQueueWaitIdle pair pipeline");
    detail::vk_check(send_queue.wait_idle(), "vkQueueWaitIdle pair pipeline");
    out.gbps = stats_of(std::move(gbps));
    out.frames_per_s = stats_of(std::move(rates));
    out.verified = std::all_of(targets.begin(), targets.end(), [&](const detail::Image& target) {
        return read_image(receiver, target.get(), extent, k_format,
                          VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL) == bytes;
    });
    return out;
}

} // namespace tandem::bench
