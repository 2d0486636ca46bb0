// RetireList: fenced retirement. Objects that the GPU may still use (a task instance's slot
// images, staging, command buffers, its transfer link and its workload; a path self-test's
// link) are handed over with the timeline values that last used them, and destroyed on a Tandem
// thread once the GPU has passed every one of those values: no thread waits for it, and nothing
// is destroyed while a batch may still refer to it (Dawn's FencedDeleter, Granite's per-frame
// destroy lists).
//
// An entry goes in two steps. First its points: each a timeline semaphore of one device and the
// value whose completion ends the object's use, polled (vkGetSemaphoreCounterValue, never a
// wait). Then a marker: once the points are reached, one empty batch on every queue of the
// entry's devices signals that queue's marker timeline, and the entry goes when those markers
// complete. The marker is there because a driver may still release a batch's wait semaphores
// just after its signal becomes visible (lavapipe's submit thread does): a later batch on the
// same queue completing means that batch was finished with. Entries past their points in one
// collect() share one marker per queue. A marker on an application's queue is only submitted
// there (under its lock), never waited for.
//
// Threads: retire() from any thread; collect() from Tandem's threads (one at a time: a second
// caller returns at once); clear() at shutdown once nothing else calls in and the devices are
// idle. Objects are destroyed by collect() or clear(), outside the list's lock. Lifetime: the
// devices outlive the list.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "core/device.hpp"
#include "sync/timeline_semaphore.hpp"

namespace tandem::detail {

// Timeline `semaphore` of `device` reaching `value` ends an object's use by the GPU.
struct RetirePoint {
    const Device* device = nullptr;
    VkSemaphore semaphore = VK_NULL_HANDLE;
    std::uint64_t value = 0;
};

// What a retired object becomes: its destructor frees it.
class Retired {
public:
    Retired() = default;
    virtual ~Retired() = default;
    Retired(const Retired&) = delete;
    Retired& operator=(const Retired&) = delete;
};

class RetireList {
public:
    // `devices`: every device whose objects may be retired here (each gets its queues' markers).
    explicit RetireList(const std::vector<const Device*>& devices);
    ~RetireList();
    RetireList(const RetireList&) = delete;
    RetireList& operator=(const RetireList&) = delete;

    // Takes `object` and destroys it once every point is reached and then a marker on every
    // queue of `devices` completed. Never blocks; throws only std::bad_alloc (the object is then
    // destroyed at once: callers retire what they know to be finished with, or hold it).
    void retire(std::unique_ptr<Retired> object, std::vector<RetirePoint> points,
                std::vector<const Device*> devices);
    template <typename T>
    void retire(T object, std::vector<RetirePoint> points, std::vector<const Device*> devices) {
        // Converted here, so the call below is the untemplated overload's, not this one's again.
        std::unique_ptr<Retired> holder = std::make_unique<Holder<T>>(std::move(object));
        retire(std::move(holder), std::move(points), std::move(devices));
    }

    // Polls, marks and destroys what the GPU is done with. Never blocks (a concurrent caller
    // returns at once) and never throws.
    void collect() noexcept;
    // Entries not destroyed yet (waiting for points or markers, or being destroyed now).
    [[nodiscard]] std::size_t pending() const;
    // Shutdown: waits until `deadline` at the latest for every entry's points (blocking waits),
    // then destroys every entry. False when some point was not reached in time.
    [[nodiscard]] bool drain(std::chrono::steady_clock::time_point deadline) noexcept;
    // Destroys every entry now. Shutdown only: the caller waited until the devices are idle.
    void clear() noexcept;

private:
    template <typename T>
    struct Holder final : Retired {
        explicit Holder(T o) : object(std::move(o)) {}
        T object;
    };
    // One queue's marker timeline.
    struct Marker {
        const Device* device = nullptr;
        const Queue* queue = nullptr;
        std::unique_ptr<TimelineSemaphore> timeline;
        std::uint64_t submitted = 0; // the last value a marker batch signals (collect() only)
    };
    struct Entry {
        std::unique_ptr<Retired> object;
        std::vector<RetirePoint> points;
        std::vector<const Device*> devices;
        bool marked = false;              // points reached; waits for `markers`
        std::vector<RetirePoint> markers; // one per queue of `devices`
    };

    // A point reached (or its device failed: the point will never tell, so the entry waits for
    // clear()). Poll with nothing locked but the device's host-semaphore guard.
    [[nodiscard]] static bool reached(const RetirePoint& point) noexcept;
    // Submits one marker batch on every queue of `device`; appends their points to `out`.
    // False when a submission failed (the device is lost: the entry then waits for clear()).
    [[nodiscard]] bool mark(const Device& device, std::vector<RetirePoint>& out) noexcept;

    std::vector<Marker> m_markers; // fixed after construction
    mutable std::mutex m_mutex;    // guards m_entries and m_held
    std::vector<Entry> m_entries;
    // Entries taken and not yet destroyed, those collect() has out of m_entries included.
    std::size_t m_held = 0;
    std::mutex m_collecting; // one collect() at a time
};

} // namespace tandem::detail
