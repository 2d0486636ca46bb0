#include "core/image_cache.hpp"

#include <algorithm>
#include <utility>

namespace tandem::detail {
namespace {

// Every live cache, for forget_partner(). Never destroyed: a runtime left alive at the process's
// exit may still have threads that use them while static objects are destroyed.
std::mutex& registry_lock() {
    static auto* const lock = new std::mutex;
    return *lock;
}
std::vector<ImageCache*>& registry() {
    static auto* const caches = new std::vector<ImageCache*>;
    return *caches;
}

// Renames a reused image and its view.
void rename(const Device& device, const Image& image, const std::string& name) {
    device.name(image.get(), VK_OBJECT_TYPE_IMAGE, name);
    device.name(image.view.get(), VK_OBJECT_TYPE_IMAGE_VIEW, name + " view");
}

} // namespace

ImageCache::ImageCache(const Device& device) : m_device(device) {
    std::lock_guard lock(registry_lock());
    registry().push_back(this);
}

ImageCache::~ImageCache() {
    std::lock_guard lock(registry_lock());
    std::erase(registry(), this);
}

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

std::shared_ptr<ImageCache::Entry> ImageCache::find(const std::string& key) {
    std::lock_guard lock(m_lock);
    const auto it =
        std::find_if(m_idle.begin(), m_idle.end(), [&key](const auto& e) { return e->key == key; });
    if (it == m_idle.end()) {
        return nullptr;
    }
    std::shared_ptr<Entry> entry = *it;
    m_idle.erase(it);
    m_idle_bytes -= entry->bytes;
    ++m_reused;
    return entry;
}

std::optional<Image> ImageCache::take(const ImageDesc& desc) {
    std::shared_ptr<Entry> entry = find(key_of(desc));
    if (!entry) {
        return std::nullopt;
    }
    rename(m_device, entry->images[0], desc.name);
    return std::move(hand_out(std::move(entry))[0]);
}

Image ImageCache::lend(const ImageDesc& desc, Image made, VkDeviceSize bytes) {
    auto entry = std::make_shared<Entry>();
    entry->key = key_of(desc);
    entry->images.push_back(std::move(made));
    entry->bytes = bytes;
    return std::move(hand_out(std::move(entry))[0]);
}

std::optional<std::pair<Image, Image>>
ImageCache::take_pair(const Device& partner, const std::string& kind, const ImageDesc& desc) {
    std::shared_ptr<Entry> entry =
        find(kind + " " + std::to_string(reinterpret_cast<std::uintptr_t>(&partner)) + " " +
             key_of(desc));
    if (!entry) {
        return std::nullopt;
    }
    rename(m_device, entry->images[0], desc.name + " (worker)");
    rename(partner, entry->images[1], desc.name + " (primary)");
    std::vector<Image> out = hand_out(std::move(entry));
    return std::pair<Image, Image>(std::move(out[0]), std::move(out[1]));
}

std::pair<Image, Image> ImageCache::lend_pair(const Device& partner, const std::string& kind,
                                              const ImageDesc& desc, std::pair<Image, Image> made,
                                              VkDeviceSize bytes) {
    auto entry = std::make_shared<Entry>();
    entry->key = kind + " " + std::to_string(reinterpret_cast<std::uintptr_t>(&partner)) + " " +
                 key_of(desc);
    entry->images.push_back(std::move(made.first));
    entry->images.push_back(std::move(made.second));
    entry->partner = &partner;
    entry->bytes = bytes;
    std::vector<Image> out = hand_out(std::move(entry));
    return {std::move(out[0]), std::move(out[1])};
}

std::vector<Image> ImageCache::hand_out(std::shared_ptr<Entry> entry) {
    // The entry owns the Vulkan objects; what is handed out names them. `lent` is shared by the
    // handed-out images' deleters: when the last of them is destroyed, the entry comes back (the
    // views and memory handed out have no deleters of their own).
    Entry* raw = entry.get();
    std::shared_ptr<Entry> lent(
        raw, [this, owner = std::move(entry)](Entry*) mutable { give_back(std::move(owner)); });
    std::vector<Image> out;
    for (const Image& real : raw->images) {
        Image image;
        image.format = real.format;
        image.extent = real.extent;
        image.memory_offset = real.memory_offset;
        image.view = Handle<VkImageView>(real.view.get(), {});
        image.memory = Handle<VkDeviceMemory>(real.memory.get(), {});
        image.image = Handle<VkImage>(real.get(), [lent](VkImage) mutable { lent.reset(); });
        out.push_back(std::move(image));
    }
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

void ImageCache::forget(const Device& partner) noexcept {
    std::vector<std::shared_ptr<Entry>> evicted;
    std::lock_guard lock(m_lock);
    for (auto it = m_idle.begin(); it != m_idle.end();) {
        if ((*it)->partner == &partner) {
            m_idle_bytes -= (*it)->bytes;
            evicted.push_back(std::move(*it));
            it = m_idle.erase(it);
        } else {
            ++it;
        }
    }
}

void ImageCache::forget_partner(const Device& device) noexcept {
    std::lock_guard lock(registry_lock());
    for (ImageCache* cache : registry()) {
        cache->forget(device);
    }
}

std::pair<std::size_t, VkDeviceSize> ImageCache::held_on(const Device& partner) const {
    std::lock_guard lock(m_lock);
    std::pair<std::size_t, VkDeviceSize> out{0, 0};
    for (const auto& e : m_idle) {
        if (e->partner == &partner) {
            ++out.first;
            out.second += e->bytes;
        }
    }
    return out;
}

ImageCache::Held ImageCache::held() const {
    Held out;
    {
        std::lock_guard lock(m_lock);
        for (const auto& e : m_idle) {
            ++(e->partner != nullptr ? out.pairs : out.images);
        }
        out.bytes = m_idle_bytes;
    }
    std::lock_guard lock(registry_lock());
    for (const ImageCache* cache : registry()) {
        if (cache != this) {
            const auto halves = cache->held_on(m_device);
            out.partner_halves += halves.first;
            out.partner_bytes += halves.second;
        }
    }
    return out;
}

std::pair<std::size_t, VkDeviceSize> ImageCache::idle() const {
    const Held h = held();
    return {h.images + h.pairs + h.partner_halves, h.bytes + h.partner_bytes};
}

std::size_t ImageCache::idle_entries() const {
    std::lock_guard lock(m_lock);
    return m_idle.size();
}

std::uint64_t ImageCache::reused() const {
    std::lock_guard lock(m_lock);
    return m_reused;
}

} // namespace tandem::detail
