#include "core/image_cache.hpp"

#include <algorithm>
#include <utility>

namespace tandem::detail {

ImageCache::~ImageCache() = default;

std::string ImageCache::key_of(const ImageDesc& desc) {
    std::vector<std::uint32_t> families = desc.queue_families;
    std::sort(families.begin(), families.end());
    families.erase(std::unique(families.begin(), families.end()), families.end());
    std::string key = std::to_string(desc.width) + "x" + std::to_string(desc.height) + " " +
                      std::to_string(desc.format) + " " + std::to_string(desc.usage) +
                      (desc.transient ? " transient" : "");
    for (std::uint32_t f : families) {
        key += " " + std::to_string(f);
    }
    return key;
}

std::optional<Image> ImageCache::take(const ImageDesc& desc) {
    const std::string key = key_of(desc);
    std::shared_ptr<Entry> entry;
    {
        std::lock_guard lock(m_lock);
        const auto it = std::find_if(m_idle.begin(), m_idle.end(),
                                     [&key](const auto& e) { return e->key == key; });
        if (it == m_idle.end()) {
            return std::nullopt;
        }
        entry = *it;
        m_idle.erase(it);
        m_idle_bytes -= entry->bytes;
        ++m_reused;
    }
    m_device.name(entry->image.get(), VK_OBJECT_TYPE_IMAGE, desc.name);
    m_device.name(entry->image.view.get(), VK_OBJECT_TYPE_IMAGE_VIEW, desc.name + " view");
    return hand_out(std::move(entry));
}

Image ImageCache::lend(const ImageDesc& desc, Image made, VkDeviceSize bytes) {
    auto entry = std::make_shared<Entry>();
    entry->key = key_of(desc);
    entry->image = std::move(made);
    entry->bytes = bytes;
    return hand_out(std::move(entry));
}

Image ImageCache::hand_out(std::shared_ptr<Entry> entry) {
    // The entry owns the Vulkan objects; what is handed out names them, and destroying it gives
    // the entry back (the image's deleter; the view and memory have none of their own).
    const Image& real = entry->image;
    Image out;
    out.format = real.format;
    out.extent = real.extent;
    out.memory_offset = real.memory_offset;
    out.view = Handle<VkImageView>(real.view.get(), {});
    out.memory = Handle<VkDeviceMemory>(real.memory.get(), {});
    const VkImage image = real.get();
    out.image = Handle<VkImage>(
        image, [this, entry = std::move(entry)](VkImage) mutable { give_back(std::move(entry)); });
    return out;
}

void ImageCache::give_back(std::shared_ptr<Entry> entry) noexcept {
    std::vector<std::shared_ptr<Entry>> evicted; // destroyed outside the lock
    try {
        std::lock_guard lock(m_lock);
        m_idle_bytes += entry->bytes;
        m_idle.push_front(std::move(entry));
        while (m_idle.size() > k_idle_kept || m_idle_bytes > k_idle_bytes) {
            m_idle_bytes -= m_idle.back()->bytes;
            evicted.push_back(std::move(m_idle.back()));
            m_idle.pop_back();
        }
    } catch (...) {
        // Out of memory: the entry (if it was not kept) is destroyed with `entry` or `evicted`.
    }
}

std::pair<std::size_t, VkDeviceSize> ImageCache::idle() const {
    std::lock_guard lock(m_lock);
    return {m_idle.size(), m_idle_bytes};
}

std::uint64_t ImageCache::reused() const {
    std::lock_guard lock(m_lock);
    return m_reused;
}

} // namespace tandem::detail
