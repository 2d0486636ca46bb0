// PairBridge: the one host thread that carries completions from one worker device to one primary
// device, for every HostBridge (one per link) on that pair. The thread starts when the first
// HostBridge attaches and ends when the last one detaches, so a pair that never needs a bridge
// costs no thread and a pair with many tasks costs one. It serves its HostBridges in turn:
// each one's forwards run in their own order, and a forward still waiting for its worker value
// never holds back another HostBridge's forward that is ready.
//
// Failure rule: a HostBridge's timeout, its action's failure or an error reading its worker
// timeline fails that HostBridge only (its link's worker work, or its host step, went wrong).
// VK_ERROR_DEVICE_LOST, read from a worker timeline or returned by an action, is the pair's
// device failing: it fails every HostBridge of the pair, and any attached later, with that
// sentence.
//
// The runtime keeps one PairBridge per direction of each device pair while a stream holds it
// (runtime/device_pairs.hpp), so its tasks' transfers in one direction share a thread.
//
// Threads: every member from any thread, except that a HostBridge must not attach or detach from
// an action or on_exit running on this pair's thread. Lifetime: a PairBridge is held by
// shared_ptr by every HostBridge attached to it and by whoever made it; destroy it (drop the last
// holder) before the devices of its pair.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/device.hpp"

namespace tandem::detail {

class HostBridge;

class PairBridge {
public:
    explicit PairBridge(std::string name);
    ~PairBridge();
    PairBridge(const PairBridge&) = delete;
    PairBridge& operator=(const PairBridge&) = delete;

    [[nodiscard]] const std::string& name() const noexcept { return m_name; }
    // HostBridges attached now.
    [[nodiscard]] std::size_t channels() const;
    // True while the pair's thread runs (from the first attach to the last detach).
    [[nodiscard]] bool running() const;
    // Why the pair's device failed (VK_ERROR_DEVICE_LOST, in a sentence); empty before.
    [[nodiscard]] std::string device_failure() const;
    // Ends the thread for good, its HostBridges still attached and their forwards left undone:
    // for a process's exit (Runtime::stop_for_exit). Waits for the forward under way.
    void halt();

private:
    friend class HostBridge;
    // HostBridge's constructor and stop(); attach starts the thread if none runs, detach waits
    // until the thread no longer serves `channel`, and the last detach ends the thread.
    void attach(HostBridge& channel);
    void detach(HostBridge& channel);
    // A HostBridge has a new forward: wake the thread if it sleeps.
    void kick();
    // The pair's device failed: every HostBridge fails with `message`.
    void fail_device(const std::string& message);
    [[nodiscard]] bool device_failed() const noexcept {
        return m_device_failed.load(std::memory_order_acquire);
    }
    void run();

    std::string m_name;
    std::mutex m_lifecycle; // attach and detach, around starting and joining the thread
    mutable std::mutex m_mutex;
    std::condition_variable m_cv;        // kicks and stop, to the thread
    std::condition_variable m_served_cv; // the thread finished serving a channel, to detach()
    std::vector<HostBridge*> m_channels; // guarded by m_mutex
    HostBridge* m_serving = nullptr;     // guarded by m_mutex
    std::uint64_t m_kicks = 0;           // guarded by m_mutex
    bool m_stop = false;                 // guarded by m_mutex
    bool m_halted = false;               // guarded by m_mutex: halt() was called
    std::string m_device_failure;        // guarded by m_mutex
    // Set once with m_device_failure written (release), read by the thread before each channel.
    std::atomic<bool> m_device_failed{false};
    std::thread m_thread; // under m_lifecycle
};

} // namespace tandem::detail
