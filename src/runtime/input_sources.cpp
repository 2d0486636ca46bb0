#include "runtime/input_sources.hpp"

#include <algorithm>

#include "runtime/task_chains.hpp"
#include "runtime/task_inputs.hpp"

namespace tandem::detail {

void add_wait(std::vector<VkSemaphoreSubmitInfo>& waits, const VkSemaphoreSubmitInfo& wait) {
    for (VkSemaphoreSubmitInfo& w : waits) {
        if (w.semaphore == wait.semaphore) {
            w.value = std::max(w.value, wait.value);
            w.stageMask |= wait.stageMask;
            return;
        }
    }
    waits.push_back(wait);
}

void InputSources::hold(std::uint32_t slot, std::vector<ChainedRead>& reads) noexcept {
    const auto taken = [&](const ChainedRead& read) {
        return read.input < m_sources.size() && m_sources[read.input]->hold(slot, read);
    };
    reads.erase(std::remove_if(reads.begin(), reads.end(), taken), reads.end());
}

void InputSources::release(std::uint32_t slot, std::uint64_t done) noexcept {
    for (const auto& source : m_sources) {
        source->release(slot, done);
    }
}

bool InputSources::holding(std::uint32_t slot) const noexcept {
    return std::any_of(m_sources.begin(), m_sources.end(),
                       [slot](const auto& source) { return source->holding(slot); });
}

void make_sources(TaskInstance& instance, std::span<const TaskInputDesc> inputs) {
    std::size_t copied = 0;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (inputs[i].producer) {
            instance.sources.add(std::make_unique<ChainedInput>(i, instance.desc.slots));
        } else {
            instance.sources.add(std::make_unique<CopiedInput>(instance, i, copied++));
        }
    }
}

} // namespace tandem::detail
