#include "display_queue.hpp"

#include "frame_copy.hpp"

namespace tandem::layer {

DisplayQueue::DisplayQueue(const Desc& desc) : m_desc(desc) {}

DisplayQueue::~DisplayQueue() = default;

VkResult DisplayQueue::submit(const VkSubmitInfo2& batch) {
    const std::lock_guard lock(*m_desc.queue_mutex);
    return m_desc.vk->QueueSubmit2(m_desc.queue, 1, &batch, VK_NULL_HANDLE);
}

VkResult DisplayQueue::present(const VkPresentInfoKHR& info) {
    const std::lock_guard lock(*m_desc.queue_mutex);
    return m_desc.vk->QueuePresentKHR(m_desc.queue, &info);
}

VkResult DisplayQueue::wait_idle() {
    const std::lock_guard lock(*m_desc.queue_mutex);
    return m_desc.vk->QueueWaitIdle(m_desc.queue);
}

const FrameCopyPipeline& DisplayQueue::frame_copy_pipeline() {
    const std::lock_guard lock(m_frame_copy_mutex);
    if (!m_frame_copy_pipeline) {
        m_frame_copy_pipeline = std::make_unique<FrameCopyPipeline>(*m_desc.vk, m_desc.device);
    }
    return *m_frame_copy_pipeline;
}

} // namespace tandem::layer
