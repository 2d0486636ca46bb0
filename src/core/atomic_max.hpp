// raise_to: keeps the largest value an atomic was given, for counters several threads report
// to out of order (a timeline value seen reached, the longest job). Lock-free; never lowers.
#pragma once

#include <atomic>

namespace tandem::detail {

template <class T>
void raise_to(std::atomic<T>& value, T candidate,
              std::memory_order order = std::memory_order_relaxed) noexcept {
    T seen = value.load(std::memory_order_relaxed);
    while (seen < candidate && !value.compare_exchange_weak(seen, candidate, order)) {
    }
}

} // namespace tandem::detail
