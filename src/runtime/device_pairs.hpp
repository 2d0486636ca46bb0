// DevicePair: the one object of the runtime for a pair of its devices, in both directions. It owns
// what every transfer between the two shares: the pair matrix's cell each way (PairInfo, queried
// once), which paths passed their self-test and which were dropped each way and why (PathHealth,
// keyed by direction), the host bridge thread each way (made when a stream of that direction
// needs one, shared by all of them, gone with the last), and the path a stream opened now would
// take (what the scheduler prices a move with). Every cross-device transfer of the runtime is a
// stream on its pair: a task's output (worker -> primary), its inputs (primary -> worker) and a
// chain's feeds (worker -> worker), each opened with open_stream(), negotiated, self-tested on
// the path's first use, and falling back to the next path once one is dropped. Each stream keeps
// its own staging, timelines and command buffers; the copy queue of each side is its device's
// (transfer/link_copy_queue.hpp), one for every stream.
//
// DevicePairs: the runtime's pairs, made on first use and kept for its life (a few objects and
// no thread while no stream needs a bridge).
//
// Threads: every member from any thread (the pair's mutex; a stream's opening, which self-tests
// and blocks, from the preparation thread only). Without src/transfer, open_stream() throws and
// nothing is ever dropped. Lifetime: destroy after every stream opened on it (streams hold their
// bridge) and before the devices.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/device.hpp"
#include "runtime/slot_transport.hpp"
#include "runtime/trace_log.hpp"
#include "sync/pair_bridge.hpp"
#include "tandem/device_info.hpp"
#include "tandem/task.hpp"

namespace tandem::detail {

// A stream and the images of its slots (DevicePair::open_with_images). The link is declared
// after the images it moves: destroyed before them.
struct OpenedStream {
    std::vector<SlotImages> images;
    std::unique_ptr<SlotTransport> link;
};

class DevicePair {
public:
    // Two devices of one runtime (`a` != `b`); `cuda_stand_in`: what the cuda-peer path copies
    // with where a pair allows shared memory and not CUDA (a test's stand-in; empty: CUDA).
    // `trace`: the runtime's trace, where its streams' bridges note each band they hand on
    // while it records (null: nowhere).
    DevicePair(const Device& a, const Device& b, StagingCopierFactory cuda_stand_in = {},
               TraceLog* trace = nullptr);
    DevicePair(const DevicePair&) = delete;
    DevicePair& operator=(const DevicePair&) = delete;

    // The pair matrix's cell from `from` to the other device (its paths before any drop).
    [[nodiscard]] const PairInfo& info(const Device& from) const;
    // A stream from `from` to the other device on the best path the pair has not dropped in that
    // direction (desc.forced when given), self-tested on its first use for the pair, with the
    // direction's bridge thread when it needs one (make_link_transport). Blocking: the
    // preparation thread only. Throws Error when no path is left (or the forced one is not).
    [[nodiscard]] std::unique_ptr<SlotTransport> open_stream(const Device& from, TransferDesc desc);
    // A stream as open_stream() opens it, with the images of each of its desc.slots slots
    // (`images`). Where those images are the path's own shared memory (zero-copy) and cannot be
    // made (an import that failed, not a lost device), the path is dropped for the pair, its
    // reason beginning with `what`, and the next one tried, as for a link that cannot be set up.
    // Blocking: the preparation thread only. Throws Error when no path is left.
    [[nodiscard]] OpenedStream open_with_images(const Device& from, const TransferDesc& desc,
                                                const SlotImageUsage& images,
                                                std::string_view what);
    // The path a stream from `from` opened now would take: `forced` when it is still allowed,
    // else the best one left; nullopt when none is.
    [[nodiscard]] std::optional<TransferPath> path(const Device& from,
                                                   std::optional<TransferPath> forced) const;
    // Drops the path named `path` (SlotTransport::path_name()) from adapter `from` (one of the
    // two) with `reason`: no stream of that direction takes it again. The first reason is kept.
    void drop(std::uint32_t from, const std::string& path, const std::string& reason);
    // The paths dropped from adapter `from`, in the order they were dropped.
    [[nodiscard]] std::vector<DroppedTransferPath> dropped(std::uint32_t from) const;
    // Paths dropped so far in either direction (lock-free).
    [[nodiscard]] std::uint64_t drops() const noexcept;
    // Bridge threads running now (0 to 2).
    [[nodiscard]] std::size_t bridge_threads() const;
    // Ends both directions' bridge threads for good, and those of streams opened later
    // (PairBridge::halt).
    void halt_bridges();
    // DevicePairs::stand_in_for_cuda for a pair made before it: before any stream is opened.
    void stand_in_for_cuda(const StagingCopierFactory& copier);

private:
    struct Direction {
        const Device* from = nullptr;
        const Device* to = nullptr;
        PairInfo info;
        StagingCopierFactory cuda_copier; // empty: CUDA
    };
    // 0 for the direction from adapter `from`'s side a, 1 for b (any other index: 0).
    [[nodiscard]] std::size_t index_of(std::uint32_t from) const noexcept {
        return m_directions[1].from->info().index == from ? 1 : 0;
    }
    [[nodiscard]] const Direction& direction(std::uint32_t from) const noexcept {
        return m_directions[index_of(from)];
    }

    std::array<Direction, 2> m_directions; // a -> b, b -> a
    TraceLog* m_trace;                     // may be null
    std::shared_ptr<PathHealth> m_health;  // both directions; null without src/transfer
    mutable std::mutex m_mutex;
    // Each direction's bridge thread, held by its streams (weakly here); under m_mutex.
    std::array<std::weak_ptr<PairBridge>, 2> m_bridges;
    bool m_halted = false; // under m_mutex: halt_bridges() was called
};

class DevicePairs {
public:
    // `trace`: as DevicePair's, for every pair.
    explicit DevicePairs(TraceLog* trace = nullptr) : m_trace(trace) {}
    // The pair of `a` and `b` (either order), made on first use.
    [[nodiscard]] DevicePair& pair(const Device& a, const Device& b);
    // Drops `path` from adapter `from` to adapter `to` (DevicePair::drop); nothing when the two
    // never had a stream, as no stream can then have failed.
    void drop(std::uint32_t from, std::uint32_t to, const std::string& path,
              const std::string& reason);
    // The paths dropped from adapter `from` to adapter `to`, oldest first.
    [[nodiscard]] std::vector<DroppedTransferPath> dropped(std::uint32_t from,
                                                           std::uint32_t to) const;
    // Paths dropped so far over every pair: a reader that priced paths can tell cheaply whether it
    // must look again.
    [[nodiscard]] std::uint64_t drops() const;
    // Bridge threads running now over every pair (Tandem's threads besides the runtime's own).
    [[nodiscard]] std::size_t bridge_threads() const;
    // Ends every pair's bridge threads for good (DevicePair::halt_bridges).
    void halt_bridges();
    // Test hook: the cuda-peer path copies with `copier` instead of CUDA, and pairs that allow
    // shared memory allow it (so it runs where there is no CUDA). Before any stream is opened.
    void stand_in_for_cuda(StagingCopierFactory copier);

private:
    using Key = std::pair<std::uint32_t, std::uint32_t>; // adapter indices, smaller first
    [[nodiscard]] static Key key(std::uint32_t a, std::uint32_t b) noexcept {
        return a < b ? Key{a, b} : Key{b, a};
    }
    [[nodiscard]] DevicePair* find(std::uint32_t a, std::uint32_t b) const;

    mutable std::mutex m_mutex;
    std::map<Key, std::unique_ptr<DevicePair>> m_pairs;
    bool m_halted = false; // under m_mutex: halt_bridges() was called
    StagingCopierFactory m_cuda_stand_in;
    TraceLog* m_trace;
};

} // namespace tandem::detail
