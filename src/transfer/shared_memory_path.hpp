// SharedMemoryPath: one device-local allocation exported by the worker (opaque fd) and imported by
// the primary, for two logical devices on one GPU (equal device and driver UUIDs). The worker
// copies a band of its image into the shared buffer and releases the range to
// VK_QUEUE_FAMILY_EXTERNAL; the primary acquires it and copies it into its image. Nothing goes
// through host memory. Dedicated allocations are used when the driver requires them
// (vkGetPhysicalDeviceExternalBufferProperties). Threads and lifetime as TransferPathBackend.
#pragma once

#include "core/handle.hpp"
#include "transfer/transfer_path.hpp"

namespace tandem::detail {

class SharedMemoryPath final : public TransferPathBackend {
public:
    SharedMemoryPath(const Device& worker, const Device& primary, const StagingLayout& layout);

    [[nodiscard]] TransferPath kind() const noexcept override { return TransferPath::SharedMemory; }
    void record_worker_band(VkCommandBuffer cmd, std::uint32_t slot, const Band& band,
                            VkImage image, VkImageLayout layout) const override;
    void record_primary_band(VkCommandBuffer cmd, std::uint32_t slot, const Band& band,
                             VkImage image) const override;

private:
    Handle<VkBuffer> m_worker_buffer;
    Handle<VkDeviceMemory> m_worker_memory;
    Handle<VkBuffer> m_primary_buffer;
    Handle<VkDeviceMemory> m_primary_memory;
};

} // namespace tandem::detail
