// ImageCache: images of one device kept for the next object that asks for the same kind. Each
// device has one (Device::image_cache()); create_image (core/resources.hpp) takes from it and
// every image it makes goes back to it when its owner destroys it. The NVIDIA driver 580 keeps
// about 90 bytes of device memory and 150 of RSS of every VkImage destroyed, even bound to pooled
// memory, and about 520 of every image pair over memory exported to another opening and imported
// there (bench/README.md, tandem-bench-driver-objects): a task that comes and goes for hours with
// the same slot shapes must reuse its images rather than make new ones.
//
// An image is reused for a description with the same size, format, usage, queue families and
// transience; it keeps its memory and view, and is renamed. A pair (the zero-copy path's slot
// images: one on this device, one on a partner device over the same exported memory) is kept
// here, on the exporting device, and reused as a pair once both of its images were destroyed.
// It comes back with whatever its last owner left in it: users transition images from UNDEFINED
// before any use (which discards the contents), as for a new image. Owners destroy images only
// once the GPU is done with them (fenced retirement), so a reused image has no pending work. At
// most k_idle_kept entries and k_idle_bytes of memory wait for reuse; the least recently
// returned beyond that are destroyed: the bound is per cache, images and pairs together. A pair
// holds memory on its partner as well, so a device's memory can hold, besides its own cache's
// images and pairs, a half of each pair every other cache keeps with it as partner (held()). A
// device being destroyed takes its idle pairs out of every other device's cache first.
// Thread-safe.
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

    explicit ImageCache(const Device& device);
    // Destroys the idle images. Images lent out must have been destroyed first.
    ~ImageCache();
    ImageCache(const ImageCache&) = delete;
    ImageCache& operator=(const ImageCache&) = delete;

    // An idle image made for a description like `desc`, named desc.name, or nullopt.
    [[nodiscard]] std::optional<Image> take(const ImageDesc& desc);
    // `made` (created for `desc`, `bytes` of memory), handed out so that destroying it returns
    // it here.
    [[nodiscard]] Image lend(const ImageDesc& desc, Image made, VkDeviceSize bytes);

    // The same for a pair: `made.first` on this device, `made.second` on `partner`, both for
    // `desc`; `kind` tells pairs of different makings apart (the zero-copy path's, say).
    [[nodiscard]] std::optional<std::pair<Image, Image>>
    take_pair(const Device& partner, const std::string& kind, const ImageDesc& desc);
    [[nodiscard]] std::pair<Image, Image> lend_pair(const Device& partner, const std::string& kind,
                                                    const ImageDesc& desc,
                                                    std::pair<Image, Image> made,
                                                    VkDeviceSize bytes);

    // Device::~Device: destroys the idle pairs of every cache whose partner is `device`.
    static void forget_partner(const Device& device) noexcept;

    // What waits for reuse with memory on this device, by kind: this cache's images and pairs
    // (together at most k_idle_kept, k_idle_bytes) and the partner halves of other caches' pairs
    // that name this device (bounded by those caches).
    struct Held {
        std::size_t images = 0;
        std::size_t pairs = 0;
        VkDeviceSize bytes = 0; // this device's memory of the two above
        std::size_t partner_halves = 0;
        VkDeviceSize partner_bytes = 0;
    };
    [[nodiscard]] Held held() const;
    // The allocations and bytes of this device's memory that entries waiting for reuse hold
    // (theirs here, and the partner side of other devices' pairs that name this device).
    [[nodiscard]] std::pair<std::size_t, VkDeviceSize> idle() const;
    // Entries waiting for reuse here.
    [[nodiscard]] std::size_t idle_entries() const;
    [[nodiscard]] std::uint64_t reused() const;

private:
    struct Entry {
        std::string key;
        std::vector<Image> images; // one, or a pair (this device's first)
        const Device* partner = nullptr;
        VkDeviceSize bytes = 0; // one image's memory (a pair's sides are the same size)
    };
    [[nodiscard]] static std::string key_of(const ImageDesc& desc);
    [[nodiscard]] std::shared_ptr<Entry> find(const std::string& key);
    [[nodiscard]] std::vector<Image> hand_out(std::shared_ptr<Entry> entry);
    void give_back(std::shared_ptr<Entry> entry) noexcept;
    void forget(const Device& partner) noexcept;
    // Allocations and bytes of `partner`'s memory held by this cache's idle pairs.
    [[nodiscard]] std::pair<std::size_t, VkDeviceSize> held_on(const Device& partner) const;

    const Device& m_device;
    mutable std::mutex m_lock;
    std::list<std::shared_ptr<Entry>> m_idle; // most recently returned first
    VkDeviceSize m_idle_bytes = 0;
    std::uint64_t m_reused = 0;
};

} // namespace tandem::detail
