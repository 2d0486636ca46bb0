// AppImage: the application's side of a task input in tests: one image (or buffer) on the
// primary (of the runtime's embedded device) that the test rewrites with new bytes through the
// primary's queue and its lock, each write waiting for Tandem's input timeline to pass the last
// submit's value and signalling a timeline of its own when it finishes.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <mutex>
#include <span>

#include <gtest/gtest.h>

#include "core/device.hpp"
#include "core/resources.hpp"
#include "sync/timeline_semaphore.hpp"
#include "tandem/runtime.hpp"

namespace tandem::test {

// The application's side: one image on the primary that it rewrites with each round's bytes
// (after Tandem's input timeline passed the last submit's value), through the primary's queue
// and its lock, signalling a timeline of its own when the writes finish.
class AppImage {
public:
    AppImage(detail::Device& device, const Runtime& runtime, VkFormat format, std::uint32_t width,
             std::uint32_t height)
        : m_device(device), m_vk(runtime.primary_vulkan()), m_input(runtime.input_timeline()),
          m_writes(device, "app input writes"),
          m_upload(detail::create_buffer(device, upload_desc(format, width, height))), m_extent{
                                                                                           width,
                                                                                           height} {
        detail::ImageDesc d;
        d.width = width;
        d.height = height;
        d.format = format;
        d.usage = VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT |
                  VK_IMAGE_USAGE_SAMPLED_BIT;
        d.name = "app input";
        d.queue_families = {m_vk.queue_family};
        m_image = detail::create_image(device, d);
        m_pool = detail::CommandPool(device, m_vk.queue_family, "app input pool");
        for (auto& c : m_cmds) {
            c = m_pool.allocate("app input write");
        }
    }

    // The same for a buffer input of `size` bytes: a buffer on the primary whose bytes from
    // `offset` on the input is, rewritten the same way.
    AppImage(detail::Device& device, const Runtime& runtime, VkDeviceSize size, VkDeviceSize offset)
        : m_device(device), m_vk(runtime.primary_vulkan()), m_input(runtime.input_timeline()),
          m_writes(device, "app input writes"),
          m_upload(detail::create_buffer(device, upload_desc(size))), m_offset(offset) {
        detail::BufferDesc d;
        d.size = offset + size;
        d.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
        d.name = "app input buffer";
        m_buffer = detail::create_buffer(device, d);
        m_pool = detail::CommandPool(device, m_vk.queue_family, "app input pool");
        for (auto& c : m_cmds) {
            c = m_pool.allocate("app input write");
        }
    }

    // Writes `bytes` once the input timeline reached `released` (Tandem's copy of the last
    // submit ran); returns the InputImage to submit with. The host waits only for the command
    // buffer it reuses.
    InputImage write(std::span<const std::uint8_t> bytes, std::uint64_t released) {
        return record(bytes, released, nullptr);
    }

    // Writes `bytes` into the image `loan` lent for the task's first input instead (from
    // UNDEFINED, once the input timeline reached loan.writable), as an application renders into
    // a lent image; returns the InputImage naming it, in TRANSFER_DST_OPTIMAL. With
    // `signal_loan` the write also signals the loan's own semaphore (InputLoan::written), which
    // the InputImage then names, so that the submit makes no Vulkan call.
    InputImage write_lent(std::span<const std::uint8_t> bytes, const InputLoan& loan,
                          bool signal_loan = false) {
        return record(bytes, loan.writable, &loan.inputs.at(0), signal_loan ? &loan : nullptr);
    }

    // The host waits for the input timeline before each write, and the write's batch does not:
    // for a queue handed to Tandem alone that the test still submits to (under Tandem's lock),
    // where a batch waiting for a value queued before the copy that signals it never runs.
    void wait_on_host() { m_host_waits = true; }

    // Waits for every write and for Tandem's copy of the last submit (`released`), before the
    // image is destroyed.
    // 0: the writes alone (the runtime, and its input timeline, may be gone).
    void finish(std::uint64_t released) {
        EXPECT_EQ(m_writes.wait(m_value, std::chrono::seconds(20)), VK_SUCCESS);
        if (released == 0) {
            return;
        }
        EXPECT_EQ(detail::wait_timeline(m_device, m_input, released, std::chrono::seconds(20),
                                        "app input released"),
                  VK_SUCCESS);
    }

    // Each write's InputImage names the image's own view (InputImage::view).
    void name_view() noexcept { m_name_view = true; }

private:
    InputImage record(std::span<const std::uint8_t> bytes, std::uint64_t released,
                      const LentInput* lent, const InputLoan* signalled = nullptr) {
        const std::size_t k = m_rounds % m_cmds.size();
        if (m_rounds >= m_cmds.size()) {
            EXPECT_EQ(m_writes.wait(m_values[k], std::chrono::seconds(20)), VK_SUCCESS);
        }
        // The upload buffer is rewritten only once the write before finished.
        if (m_rounds > 0) {
            EXPECT_EQ(m_writes.wait(m_value, std::chrono::seconds(20)), VK_SUCCESS);
        }
        if (m_host_waits && released > 0) {
            EXPECT_EQ(detail::wait_timeline(m_device, m_input, released, std::chrono::seconds(20),
                                            "app input released"),
                      VK_SUCCESS);
            released = 0;
        }
        EXPECT_EQ(bytes.size(), m_upload.size);
        std::memcpy(m_upload.mapped, bytes.data(),
                    std::min<std::size_t>(bytes.size(), m_upload.size));
        VkCommandBuffer cmd = m_cmds[k];
        EXPECT_EQ(vkResetCommandBuffer(cmd, 0), VK_SUCCESS);
        VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        EXPECT_EQ(vkBeginCommandBuffer(cmd, &begin), VK_SUCCESS);
        if (m_buffer.buffer) {
            detail::memory_barrier(cmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE,
                                   VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
            const VkBufferCopy region{0, m_offset, m_upload.size};
            vkCmdCopyBuffer(cmd, m_upload.buffer.get(), m_buffer.buffer.get(), 1, &region);
        } else if (lent != nullptr) {
            detail::image_barrier(cmd, lent->image, VK_IMAGE_LAYOUT_UNDEFINED,
                                  VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                  VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE,
                                  VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
            VkBufferImageCopy region{};
            region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
            region.imageExtent = {lent->extent.width, lent->extent.height, 1};
            vkCmdCopyBufferToImage(cmd, m_upload.buffer.get(), lent->image,
                                   VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
        } else {
            detail::image_barrier(cmd, m_image.get(), m_layout,
                                  VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                  VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE,
                                  VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
            VkBufferImageCopy region{};
            region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
            region.imageExtent = {m_extent.width, m_extent.height, 1};
            vkCmdCopyBufferToImage(cmd, m_upload.buffer.get(), m_image.get(),
                                   VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
            detail::image_barrier(cmd, m_image.get(), VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                  VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
                                  VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                                  VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE);
            m_layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
        }
        EXPECT_EQ(vkEndCommandBuffer(cmd), VK_SUCCESS);
        VkSemaphoreSubmitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
        wait.semaphore = m_input;
        wait.value = released;
        wait.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        const std::array<VkSemaphoreSubmitInfo, 2> signals{
            m_writes.submit_info(++m_value, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT),
            signalled != nullptr ? signalled->written_signal() : VkSemaphoreSubmitInfo{}};
        VkCommandBufferSubmitInfo cb{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
        cb.commandBuffer = cmd;
        VkSubmitInfo2 submit{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
        submit.waitSemaphoreInfoCount = released > 0 ? 1 : 0;
        submit.pWaitSemaphoreInfos = &wait;
        submit.commandBufferInfoCount = 1;
        submit.pCommandBufferInfos = &cb;
        submit.signalSemaphoreInfoCount = signalled != nullptr ? 2 : 1;
        submit.pSignalSemaphoreInfos = signals.data();
        {
            std::lock_guard lock(*m_vk.queue_mutex);
            EXPECT_EQ(vkQueueSubmit2(m_vk.queue, 1, &submit, VK_NULL_HANDLE), VK_SUCCESS);
        }
        m_values[k] = m_value;
        ++m_rounds;
        if (signalled != nullptr) {
            return signalled->input(0, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL);
        }
        if (lent != nullptr) {
            return InputImage{lent->image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, m_writes.handle(),
                              m_value};
        }
        if (m_buffer.buffer) {
            return InputImage{.wait_semaphore = m_writes.handle(),
                              .wait_value = m_value,
                              .buffer = m_buffer.buffer.get(),
                              .buffer_offset = m_offset};
        }
        InputImage out{m_image.get(), m_layout, m_writes.handle(), m_value};
        out.view = m_name_view ? m_image.view.get() : VK_NULL_HANDLE;
        return out;
    }

    static detail::BufferDesc upload_desc(VkFormat format, std::uint32_t width,
                                          std::uint32_t height) {
        return upload_desc(VkDeviceSize{width} * height * detail::bytes_per_texel(format));
    }
    static detail::BufferDesc upload_desc(VkDeviceSize size) {
        detail::BufferDesc d;
        d.size = size;
        d.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
        d.required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        d.name = "app input upload";
        return d;
    }

    const detail::Device& m_device;
    PrimaryVulkan m_vk;
    VkSemaphore m_input;
    detail::TimelineSemaphore m_writes;
    detail::Buffer m_upload;
    VkExtent2D m_extent{};
    detail::Image m_image;
    bool m_name_view = false;
    detail::Buffer m_buffer; // a buffer input's, instead of m_image
    VkDeviceSize m_offset = 0;
    detail::CommandPool m_pool;
    std::array<VkCommandBuffer, 3> m_cmds{};
    std::array<std::uint64_t, 3> m_values{};
    std::uint64_t m_value = 0;
    std::size_t m_rounds = 0;
    VkImageLayout m_layout = VK_IMAGE_LAYOUT_UNDEFINED;
    bool m_host_waits = false;
};

} // namespace tandem::test
