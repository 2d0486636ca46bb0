// PathHealth: what Tandem learned about the transfer paths of each (worker, primary) adapter pair
// by using them: which passed their self-test (path_self_test.hpp) and which were dropped, each
// with the reason in a sentence. A dropped path is never negotiated again for its pair:
// negotiation runs on restrict(pair), in which it is unavailable with its reason, so forcing it
// is refused with that reason too. A path goes untested -> passed -> dropped or untested ->
// dropped, never back; the first reason a path was dropped for is the one kept.
//
// Threads: every method is thread-safe (one mutex) and never touches a device. One record per
// tandem::Runtime, alive as long as it.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tandem/device_info.hpp"

namespace tandem::detail {

class PathHealth {
public:
    struct Dropped {
        TransferPath path = TransferPath::HostCopy;
        std::string reason;
    };

    // True once `path` passed its self-test for the pair and was not dropped since.
    [[nodiscard]] bool passed(std::uint32_t worker, std::uint32_t primary, TransferPath path) const;
    // Records a passed self-test; a dropped path stays dropped.
    void mark_passed(std::uint32_t worker, std::uint32_t primary, TransferPath path);
    // Drops `path` for the pair. False (the first reason kept) when it was dropped already.
    bool drop(std::uint32_t worker, std::uint32_t primary, TransferPath path, std::string reason);
    // Why `path` was dropped for the pair; nullopt while it is not.
    [[nodiscard]] std::optional<std::string>
    dropped_reason(std::uint32_t worker, std::uint32_t primary, TransferPath path) const;
    // The pair's dropped paths, in the order they were dropped.
    [[nodiscard]] std::vector<Dropped> dropped(std::uint32_t worker, std::uint32_t primary) const;
    // `pair` with each of its dropped paths unavailable, the reason saying it was dropped and why.
    [[nodiscard]] PairInfo restrict(const PairInfo& pair) const;
    // How many paths were dropped so far, over every pair: a reader that priced paths can tell
    // cheaply whether it must look again. Lock-free.
    [[nodiscard]] std::uint64_t drops() const noexcept {
        return m_drops.load(std::memory_order_acquire);
    }

private:
    enum class State { Passed, Dropped };
    struct Entry {
        std::uint32_t worker = 0;
        std::uint32_t primary = 0;
        TransferPath path = TransferPath::HostCopy;
        State state = State::Passed;
        std::string reason; // Dropped only
    };
    [[nodiscard]] const Entry* find(std::uint32_t worker, std::uint32_t primary,
                                    TransferPath path) const noexcept;

    mutable std::mutex m_mutex;
    std::vector<Entry> m_entries; // a handful per pair; in the order first recorded
    std::atomic<std::uint64_t> m_drops{0};
};

} // namespace tandem::detail
