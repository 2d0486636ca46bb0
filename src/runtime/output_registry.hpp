// OutputRegistry: which slot holds a task's newest ready output. It publishes a completed
// generation only when it is newer than the published one, so a late completion never rolls a
// newer output back. Not thread-safe; the owning task serialises access under its mutex.
#pragma once

#include <cstdint>
#include <optional>

namespace tandem::detail {

struct PublishedOutput {
    std::uint64_t generation = 0;
    std::uint32_t slot = 0;
};

class OutputRegistry {
public:
    struct Offer {
        bool published = false;                // `generation` is now the published output
        std::optional<std::uint32_t> replaced; // the slot it replaced, if any
    };

    // Offers a completed generation held in `slot`.
    [[nodiscard]] Offer offer(std::uint64_t generation, std::uint32_t slot) noexcept {
        Offer out;
        if (m_current && generation <= m_current->generation) {
            return out; // older or equal: never roll back
        }
        if (m_current) {
            out.replaced = m_current->slot;
        }
        m_current = PublishedOutput{generation, slot};
        out.published = true;
        return out;
    }

    [[nodiscard]] std::optional<PublishedOutput> current() const noexcept { return m_current; }

private:
    std::optional<PublishedOutput> m_current;
};

} // namespace tandem::detail
