// FixedList: up to N values kept in place, for per-frame paths that must not allocate (a
// submit's semaphore waits, a batch queued for another thread). A push past N is refused, not
// grown: the caller knows its bound (k_max_inputs and the like) and treats a refusal as the
// error it would give for too many.
#pragma once

#include <array>
#include <cstddef>
#include <span>

namespace tandem::detail {

template <class T, std::size_t N>
class FixedList {
public:
    [[nodiscard]] bool push_back(const T& value) noexcept {
        if (m_size == N) {
            return false;
        }
        m_items[m_size++] = value;
        return true;
    }
    // Replaces the contents with `values`; false (and empty) when they are more than N.
    [[nodiscard]] bool assign(std::span<const T> values) noexcept {
        m_size = 0;
        if (values.size() > N) {
            return false;
        }
        for (const T& value : values) {
            m_items[m_size++] = value;
        }
        return true;
    }
    void clear() noexcept { m_size = 0; }

    [[nodiscard]] std::size_t size() const noexcept { return m_size; }
    [[nodiscard]] bool empty() const noexcept { return m_size == 0; }
    [[nodiscard]] std::span<const T> span() const noexcept { return {m_items.data(), m_size}; }
    [[nodiscard]] const T* begin() const noexcept { return m_items.data(); }
    [[nodiscard]] const T* end() const noexcept { return m_items.data() + m_size; }

private:
    std::array<T, N> m_items{};
    std::size_t m_size = 0;
};

} // namespace tandem::detail
