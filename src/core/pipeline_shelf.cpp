#include "core/pipeline_shelf.hpp"

#include <utility>

namespace tandem::detail {

struct PipelineShelf::Shared::Entry {
    PipelineObjects objects;
    std::uint32_t users = 0;
    std::uint64_t last_used = 0;
};

PipelineShelf::Shared::Shared(Shared&& other) noexcept
    : m_shelf(std::exchange(other.m_shelf, nullptr)),
      m_entry(std::exchange(other.m_entry, nullptr)) {}

PipelineShelf::Shared& PipelineShelf::Shared::operator=(Shared&& other) noexcept {
    if (this != &other) {
        reset();
        m_shelf = std::exchange(other.m_shelf, nullptr);
        m_entry = std::exchange(other.m_entry, nullptr);
    }
    return *this;
}

VkDescriptorSetLayout PipelineShelf::Shared::set_layout() const noexcept {
    return m_entry->objects.set_layout.get();
}

VkPipelineLayout PipelineShelf::Shared::layout() const noexcept {
    return m_entry->objects.layout.get();
}

VkPipeline PipelineShelf::Shared::pipeline() const noexcept {
    return m_entry->objects.pipeline.get();
}

void PipelineShelf::Shared::reset() noexcept {
    if (m_entry != nullptr) {
        m_shelf->release(m_entry);
    }
    m_shelf = nullptr;
    m_entry = nullptr;
}

PipelineShelf::PipelineShelf() = default;
PipelineShelf::~PipelineShelf() = default;

PipelineShelf::Shared PipelineShelf::get(const std::string& key, const Build& build) {
    std::lock_guard lock(m_lock);
    auto it = m_entries.find(key);
    if (it == m_entries.end()) {
        auto entry = std::make_unique<Shared::Entry>();
        entry->objects = build();
        ++m_builds;
        it = m_entries.emplace(key, std::move(entry)).first;
    }
    Shared::Entry* entry = it->second.get();
    ++entry->users;
    entry->last_used = ++m_tick;
    return Shared(this, entry);
}

void PipelineShelf::release(Shared::Entry* entry) noexcept {
    std::lock_guard lock(m_lock);
    --entry->users;
    entry->last_used = ++m_tick;
    std::size_t idle = 0;
    for (const auto& [key, e] : m_entries) {
        idle += e->users == 0 ? 1 : 0;
    }
    while (idle > k_idle_kept) {
        auto oldest = m_entries.end();
        for (auto it = m_entries.begin(); it != m_entries.end(); ++it) {
            if (it->second->users == 0 &&
                (oldest == m_entries.end() || it->second->last_used < oldest->second->last_used)) {
                oldest = it;
            }
        }
        m_entries.erase(oldest);
        --idle;
    }
}

std::size_t PipelineShelf::size() const {
    std::lock_guard lock(m_lock);
    return m_entries.size();
}

std::uint64_t PipelineShelf::builds() const {
    std::lock_guard lock(m_lock);
    return m_builds;
}

} // namespace tandem::detail
