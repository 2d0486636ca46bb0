// ImageCache: images of one device kept for the next object that asks for the same kind. Each
// device has one (Device::image_cache()); create_image (core/resources.hpp) takes from it and
// every image it makes goes back to it when its owner destroys it. The NVIDIA driver 580 keeps
// about 90 bytes of device memory and 150 of RSS of every VkImage destroyed, even bound to pooled
// memory (bench/README.md, tandem-bench-driver-objects): a task that comes and goes for hours
// with the same slot shapes must reuse its images rather than make new ones.
//
// An image is reused for a description with the same size, format, usage, queue families and
// transience; it keeps its memory range and view, and is renamed. It comes back with whatever
// its last owner left in it: create_image's images are UNDEFINED to their users, who transition
// them from UNDEFINED before any use (which discards the contents), as for a new image. Owners
// destroy images only once the GPU is done with them (fenced retirement), so a reused image has
// no pending work. At most k_idle_kept images and k_idle_bytes of memory wait for reuse; the
// least recently returned beyond that are destroyed. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "core/resources.hpp"

namespace tandem::detail {

class ImageCache {
public:
    static constexpr std::size_t k_idle_kept = 64;
    static constexpr VkDeviceSize k_idle_bytes = VkDeviceSize{256} << 20;

    explicit ImageCache(const Device& device) : m_device(device) {}
    // Destroys the idle images. Images lent out must have been destroyed first.
    ~ImageCache();
    ImageCache(const ImageCache&) = delete;
    ImageCache& operator=(const ImageCache&) = delete;

    // An idle image made for a description like `desc`, named desc.name, or nullopt.
    [[nodiscard]] std::optional<Image> take(const ImageDesc& desc);
    // `made` (created for `desc`, `bytes` of memory), handed out so that destroying it returns
    // it here.
    [[nodiscard]] Image lend(const ImageDesc& desc, Image made, VkDeviceSize bytes);

    // Images waiting for reuse and their memory's bytes; images reused so far.
    [[nodiscard]] std::pair<std::size_t, VkDeviceSize> idle() const;
    [[nodiscard]] std::uint64_t reused() const;

private:
    struct Entry {
        std::string key;
        Image image;
        VkDeviceSize bytes = 0;
    };
    [[nodiscard]] static std::string key_of(const ImageDesc& desc);
    [[nodiscard]] Image hand_out(std::shared_ptr<Entry> entry);
    void give_back(std::shared_ptr<Entry> entry) noexcept;

    const Device& m_device;
    mutable std::mutex m_lock;
    std::list<std::shared_ptr<Entry>> m_idle; // most recently returned first
    VkDeviceSize m_idle_bytes = 0;
    std::uint64_t m_reused = 0;
};

} // namespace tandem::detail
