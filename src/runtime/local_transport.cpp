// LocalTransport: SlotTransport for a task whose worker is the primary device itself (sender and
// receiver are one device and one image).
#include <atomic>
#include <vector>

#include "core/vk_check.hpp"
#include "runtime/slot_transport.hpp"
#include "sync/timeline_semaphore.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {
namespace {

class LocalTransport final : public SlotTransport {
public:
    LocalTransport(const Device& device, const TransferDesc& desc)
        : m_device(device), m_desc(desc),
          m_pool(device, device.queue(QueueRole::Main).family(), desc.name + " local pool"),
          m_timeline(device, desc.name + " local timeline") {
        for (std::uint32_t i = 0; i < desc.slots; ++i) {
            m_cmds.push_back(m_pool.allocate(desc.name + " local slot " + std::to_string(i)));
        }
    }

    std::string path_name() const override { return to_string(TransferPath::SameDevice); }
    bool shares_images() const noexcept override { return true; }

    SlotImages create_images(std::uint32_t /*slot*/, const std::string& name,
                             VkImageUsageFlags sender_usage,
                             VkImageUsageFlags receiver_usage) const override {
        ImageDesc d;
        d.width = m_desc.width;
        d.height = m_desc.height;
        d.format = m_desc.format;
        d.usage = VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
                  VK_IMAGE_USAGE_TRANSFER_DST_BIT | sender_usage | receiver_usage;
        d.name = name + " primary";
        d.queue_families = {m_device.queue(QueueRole::Main).family()};
        SlotImages images;
        images.receiver = create_image(m_device, d); // the workload writes it too
        return images;
    }

    VkResult submit(std::uint32_t slot, VkImage sender_image, VkImageLayout sender_layout,
                    VkSemaphoreSubmitInfo sender_wait, VkImage /*receiver_image*/,
                    VkImageLayout /*receiver_layout*/, SlotTicket& out) noexcept override {
        if (slot >= m_cmds.size()) {
            return VK_ERROR_UNKNOWN;
        }
        VkCommandBuffer cmd = m_cmds[slot];
        VkResult r = vk_status(vkResetCommandBuffer(cmd, 0), "vkResetCommandBuffer local");
        VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
        if (r == VK_SUCCESS) {
            r = vk_status(vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer local");
        }
        if (r != VK_SUCCESS) {
            return fail(r);
        }
        // The semaphore wait made the workload's writes available; the transition chains to
        // it and the signal below orders it before every reader that waits on the timeline.
        image_barrier(cmd, sender_image, sender_layout, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
                      VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE,
                      VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE);
        r = vk_status(vkEndCommandBuffer(cmd), "vkEndCommandBuffer local");
        if (r != VK_SUCCESS) {
            return fail(r);
        }
        const std::uint64_t value = m_next_value + 1;
        VkSemaphoreSubmitInfo signal =
            m_timeline.submit_info(value, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
        const std::size_t waits = sender_wait.semaphore != VK_NULL_HANDLE ? 1 : 0;
        r = m_device.queue(QueueRole::Main).submit_one(cmd, {&sender_wait, waits}, {&signal, 1});
        if (r != VK_SUCCESS) {
            return fail(r);
        }
        m_next_value = value;
        out.sender_value = value;
        out.receiver_value = value;
        return VK_SUCCESS;
    }

    VkImageLayout sender_layout_after(VkImageLayout /*sender_layout*/) const noexcept override {
        return VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
    }
    VkSemaphore sender_semaphore() const noexcept override { return m_timeline.handle(); }
    VkSemaphore receiver_semaphore() const noexcept override { return m_timeline.handle(); }
    VkResult receiver_value(std::uint64_t& out) const noexcept override {
        return m_timeline.value(out);
    }
    bool failed() const noexcept override { return m_failed.load(std::memory_order_acquire); }
    std::vector<RetirePoint>
    quiesce(std::chrono::milliseconds /*hand_off_wait*/) noexcept override {
        try {
            return {{&m_device, m_timeline.handle(), m_next_value}};
        } catch (...) {
            return {};
        }
    }
    std::string error() const override {
        return failed()
                   ? "same-device submit failed (" +
                         std::string(tandem::to_string(m_result.load(std::memory_order_relaxed))) +
                         ")"
                   : std::string();
    }

private:
    VkResult fail(VkResult r) noexcept {
        m_result.store(r, std::memory_order_relaxed);
        m_failed.store(true, std::memory_order_release); // publishes m_result
        return r;
    }

    const Device& m_device;
    TransferDesc m_desc;
    CommandPool m_pool;
    std::vector<VkCommandBuffer> m_cmds;
    TimelineSemaphore m_timeline;
    std::uint64_t m_next_value = 0; // worker thread only
    std::atomic<bool> m_failed{false};
    std::atomic<VkResult> m_result{VK_SUCCESS};
};

} // namespace

std::vector<SlotImages> make_slot_images(const SlotTransport& link, const std::string& name,
                                         std::uint32_t slots, const SlotImageUsage& usage) {
    std::vector<SlotImages> out;
    out.reserve(slots);
    for (std::uint32_t i = 0; i < slots; ++i) {
        out.push_back(link.create_images(i, name + " slot " + std::to_string(i), usage.sender,
                                         usage.receiver));
    }
    return out;
}

std::unique_ptr<SlotTransport> make_local_transport(const Device& device,
                                                    const TransferDesc& desc) {
    return std::make_unique<LocalTransport>(device, desc);
}

} // namespace tandem::detail
