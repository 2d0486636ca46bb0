// The commands that read a lease's image into a buffer on the primary, written once for every
// reader: tandem::LeaseReadback (tandem/readback.hpp) and the harness's frame-loop LeaseReader.
// The batch that runs them must wait on lease_copy_wait(lease); they leave the image in the
// lease's layout and the buffer's bytes visible to the host once the batch has completed.
#pragma once

#include <cstdint>

#include <vulkan/vulkan_core.h>

#include "tandem/lease.hpp"

namespace tandem::detail {

// Bytes per texel of a lease's format: RGBA8 and BGRA8 (UNORM, SRGB), R32F, RGBA16F. Throws
// tandem::Error for any other (a lease never has another).
[[nodiscard]] std::uint32_t lease_texel_bytes(VkFormat format);

// Records into `cmd` (begun): the image from the lease's layout to TRANSFER_SRC_OPTIMAL, a copy
// of its `region` from (0, 0) into `buffer` at offset 0 (rows tightly packed), back to the
// lease's layout, and the buffer's writes made available to host reads.
void record_lease_copy(VkCommandBuffer cmd, const Lease& lease, VkBuffer buffer,
                       VkExtent2D region) noexcept;

// The wait the batch needs: the lease's semaphore at its value, before the commands above (it
// orders the producer's writes, and the primary-side copy that published the lease, first).
[[nodiscard]] VkSemaphoreSubmitInfo lease_copy_wait(const Lease& lease) noexcept;

} // namespace tandem::detail
