#include "core/copy_queue.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "core/resources.hpp"
#include "core/stats.hpp"
#include "core/vk_check.hpp"

namespace tandem::detail {

namespace {

constexpr std::uint32_t k_width = 1920;
constexpr std::uint32_t k_height = 1080;
constexpr VkDeviceSize k_bytes = VkDeviceSize{k_width} * k_height * 4;
constexpr std::uint64_t k_wait_ns = 10'000'000'000;
constexpr double k_main_queue_margin = 1.2;

// GB/s of `batch` image -> buffer copies on `role`, median of `runs` (after one warm-up).
double time_copies(const Device& device, QueueRole role, const Image& image, const Buffer& buffer,
                   std::uint32_t batch, std::uint32_t runs) {
    const Queue& queue = device.queue(role);
    const CommandPool pool(device, queue.family(), "copy queue measurement");
    const VkCommandBuffer cmd = pool.allocate("copy queue measurement");
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    vk_check(vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer copy queue measurement");
    for (std::uint32_t i = 0; i < batch; ++i) {
        VkBufferImageCopy region{};
        region.bufferOffset = VkDeviceSize{i} * k_bytes; // each copy its own range: no hazard
        region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
        region.imageExtent = {k_width, k_height, 1};
        vkCmdCopyImageToBuffer(cmd, image.get(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, buffer.get(),
                               1, &region);
    }
    vk_check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer copy queue measurement");
    const Handle<VkFence> fence = create_fence(device, "copy queue measurement");
    const VkFence f = fence.get();
    std::vector<double> gbps;
    for (std::uint32_t run = 0; run <= runs; ++run) {
        vk_check(vkResetFences(device.handle(), 1, &f), "vkResetFences copy queue measurement");
        const auto t0 = std::chrono::steady_clock::now();
        vk_check(queue.submit_one(cmd, {}, {}, f), "vkQueueSubmit2 copy queue measurement");
        vk_check(vkWaitForFences(device.handle(), 1, &f, VK_TRUE, k_wait_ns),
                 "vkWaitForFences copy queue measurement");
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (run > 0) { // the first run pays for first use of the queue and the memory
            gbps.push_back(static_cast<double>(k_bytes * batch) / seconds / 1e9);
        }
    }
    return median(gbps);
}

std::string family_words(const Device& device, std::uint32_t family) {
    const QueueFamilyInfo& f = device.info().queue_families.at(family);
    std::string words = "family " + std::to_string(family) + " (";
    words += f.graphics ? "graphics" : (f.compute ? "compute" : "transfer only");
    return words + ")";
}

std::string rate(double gbps) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GB/s", gbps);
    return text;
}

} // namespace

const char* to_string(QueueRole role) noexcept {
    switch (role) {
    case QueueRole::Main:
        return "main";
    case QueueRole::Transfer:
        return "transfer";
    case QueueRole::SecondTransfer:
        return "second transfer";
    case QueueRole::Compute:
        return "compute";
    }
    return "?";
}

CopyQueueChoice measure_copy_queues(const Device& device, std::uint32_t batch, std::uint32_t runs) {
    CopyQueueChoice choice;
    const std::uint32_t main_family = device.queue(QueueRole::Main).family();
    const std::uint32_t transfer_family = device.queue(QueueRole::Transfer).family();
    if (const char* forced = std::getenv("TANDEM_COPY_QUEUE"); forced != nullptr) {
        const std::string_view name(forced);
        if (name == "main" || name == "transfer") {
            choice.role = name == "main" ? QueueRole::Main : QueueRole::Transfer;
            choice.family = device.queue(choice.role).family();
            choice.reason = "the " + std::string(name) + " queue, " +
                            family_words(device, choice.family) + ": set by TANDEM_COPY_QUEUE";
            return choice;
        }
    }
    if (main_family == transfer_family) {
        choice.family = transfer_family;
        choice.reason = "the transfer queue, " + family_words(device, transfer_family) +
                        ": the only queue family, nothing to choose";
        return choice;
    }
    const std::vector<std::uint32_t> families{main_family, transfer_family};
    // SAMPLED only because create_image makes a view, which needs a view-capable usage.
    const Image image =
        create_image(device, {k_width, k_height, VK_FORMAT_R8G8B8A8_UNORM,
                              VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_SAMPLED_BIT,
                              "copy queue measurement image", families});
    const Buffer buffer = create_buffer(device, {k_bytes * batch, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                                 VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0,
                                                 "copy queue measurement buffer"});
    submit_and_wait(device, QueueRole::Main, [&](VkCommandBuffer cmd) {
        // Contents do not matter here, only the layout every copy reads the image in.
        image_barrier(cmd, image.get(), VK_IMAGE_LAYOUT_UNDEFINED,
                      VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_PIPELINE_STAGE_2_NONE,
                      VK_ACCESS_2_NONE, VK_PIPELINE_STAGE_2_COPY_BIT,
                      VK_ACCESS_2_TRANSFER_READ_BIT);
    });
    for (const QueueRole role : {QueueRole::Main, QueueRole::Transfer}) {
        choice.timings.push_back({role, device.queue(role).family(),
                                  time_copies(device, role, image, buffer, batch, runs)});
    }
    // The main queue is the application's too (its rendering waits behind Tandem's copies
    // there): it is chosen only when clearly faster. On the H200 the two were within 10%.
    const CopyQueueTiming& main = choice.timings[0];
    const CopyQueueTiming& transfer = choice.timings[1];
    const bool main_wins = main.gbps > k_main_queue_margin * transfer.gbps;
    const CopyQueueTiming& best = main_wins ? main : transfer;
    const CopyQueueTiming& other = main_wins ? transfer : main;
    choice.role = best.role;
    choice.family = best.family;
    choice.measured = true;
    choice.reason = std::string("the ") + to_string(best.role) + " queue, " +
                    family_words(device, best.family) + ": copies within the device at " +
                    rate(best.gbps) + " against " + rate(other.gbps) + " on the " +
                    to_string(other.role) + " queue, " + family_words(device, other.family) +
                    (main_wins ? "" : " (the main queue only when over 1.2x faster)");
    return choice;
}

const CopyQueueChoice& Device::copy_queue_choice() const {
    std::call_once(m_copy_queue_once, [this] {
        try {
            m_copy_queue = std::make_unique<CopyQueueChoice>(measure_copy_queues(*this));
        } catch (const std::exception& e) {
            auto fallback = std::make_unique<CopyQueueChoice>();
            fallback->family = queue(QueueRole::Transfer).family();
            fallback->reason =
                std::string("the transfer queue: measuring the queues failed (") + e.what() + ")";
            m_copy_queue = std::move(fallback);
        }
    });
    return *m_copy_queue;
}

} // namespace tandem::detail
