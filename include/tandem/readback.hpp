// LeaseReadback: a lease's image read into host memory on the primary (or, for the leases
// Runtime::acquire_on_worker answers, on their worker), for tests, screenshots and checks. Not for
// the per-frame path: read() waits on the host until its copy is done.
//
//     tandem::LeaseReadback readback(runtime);
//     if (auto lease = runtime.acquire(task)) {
//         const tandem::ReadbackImage image = readback.read(*lease);
//         runtime.release(*lease, 0); // the copy is complete: nothing of it is pending
//         std::uint32_t rgba = image.texel(0, 0);
//     }
//
// read() submits one batch to the primary's main queue (Runtime::primary_vulkan(); an embedded
// runtime's is the engine's own queue): it waits on the lease's wait_semaphore for wait_value,
// moves the image from the lease's layout (SHADER_READ_ONLY_OPTIMAL) to TRANSFER_SRC_OPTIMAL,
// copies it into a host-visible buffer and moves it back, and signals a fence of its own, on
// which read() then waits. The queue's mutex (PrimaryVulkan::queue_mutex, which an embedding
// engine shares through EmbedInfo::queue_mutex) is held around that vkQueueSubmit2 only, never
// while waiting; do not call read() while holding it yourself.
//
// Release: read() leaves the runtime's primary timeline alone (its values are the application's
// to choose) and returns once the copy is complete and the image is back in the lease's layout,
// so release the lease with 0. If read() throws after its batch was submitted (the copy did not
// finish in time: Error::result() VK_TIMEOUT), the copy may still be pending: destroy the
// LeaseReadback (its destructor waits for it) before releasing the lease.
//
// Formats: RGBA8 and BGRA8 (UNORM and SRGB), R32F and RGBA16F, the formats a task's output can
// have; any other is refused with a tandem::Error.
// Threads: one thread at a time per object, any thread, including while other threads use the
// runtime. Lifetime: destroy it before the runtime (its objects belong to the primary's device).
#pragma once

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "tandem/error.hpp"
#include "tandem/export.hpp"
#include "tandem/lease.hpp"

namespace tandem {

class Runtime;

// A lease's image in host memory, rows from the top, each width * texel_bytes bytes with no
// padding, the texels' bytes as the format stores them (RGBA8: R, G, B, A).
struct ReadbackImage {
    std::uint64_t generation = 0; // the lease's
    std::uint32_t device = 0;     // the adapter that produced it (Lease::device)
    VkFormat format = VK_FORMAT_UNDEFINED;
    VkExtent2D extent{};
    std::uint32_t texel_bytes = 0; // 4 for RGBA8, BGRA8 and R32F, 8 for RGBA16F
    std::vector<std::uint8_t> bytes;

    // Texel (x, y) of a 4-byte format as its bytes packed little-endian (RGBA8: R in the low
    // byte), the form tandem::pattern_texel gives. Throws tandem::Error for (x, y) outside the
    // image, or an image whose texels are not 4 bytes (for 8-byte formats, read `bytes`).
    [[nodiscard]] std::uint32_t texel(std::uint32_t x, std::uint32_t y) const {
        if (texel_bytes != 4 || x >= extent.width || y >= extent.height ||
            bytes.size() < std::size_t{extent.width} * extent.height * 4) {
            throw Error(ErrorCategory::InvalidArgument,
                        "Texel (" + std::to_string(x) + ", " + std::to_string(y) + ") of a " +
                            std::to_string(extent.width) + "x" + std::to_string(extent.height) +
                            " image of " + std::to_string(texel_bytes) + "-byte texels",
                        "Ask for x < width and y < height of a 4-byte format; read `bytes` "
                        "for an 8-byte one");
        }
        std::uint32_t value = 0;
        std::memcpy(&value, bytes.data() + (std::size_t{y} * extent.width + x) * texel_bytes,
                    sizeof value);
        return value;
    }
};

class TANDEM_API LeaseReadback {
public:
    // A command pool and a fence on the runtime's primary device; the buffer comes with the first
    // read and grows to the largest image read. Throws tandem::Error.
    explicit LeaseReadback(const Runtime& runtime);
    // The same on adapter `adapter` (DeviceInfo::index): a worker's, for the leases
    // acquire_on_worker answers there (Lease::on_worker, Lease::device), submitted to that
    // device's queue (Runtime::device_vulkan); the primary's index reads as the constructor
    // above. Throws tandem::Error for an index that names no device of the runtime.
    LeaseReadback(const Runtime& runtime, std::uint32_t adapter);
    ~LeaseReadback();
    LeaseReadback(const LeaseReadback&) = delete;
    LeaseReadback& operator=(const LeaseReadback&) = delete;

    // The whole image of `lease` (acquired from the same runtime and not yet released), after
    // the copy completed: release the lease with 0 then. Throws tandem::Error: a format it does
    // not read, a lease of another device or queue family, a failed Vulkan call, or a copy not
    // done within `timeout` (see above).
    [[nodiscard]] ReadbackImage read(const Lease& lease,
                                     std::chrono::nanoseconds timeout = std::chrono::seconds(10));

private:
    struct State;
    std::unique_ptr<State> m_state;
};

} // namespace tandem
