// LinkFailures: a transfer path that fails in use. When an instance's transport fails while
// its worker's device works, retire() drops the path for the pair in that direction (on its
// DevicePair, runtime/device_pairs.hpp, which the next preparations negotiate past) and retires
// the instance's
// link: its Free and in-flight slots retire (its published output stays readable); its task is
// then prepared again on the same device with the next path (runtime/link_fallback.hpp). A
// failure that is the device's is left to the caller, which loses the worker.
//
// Threads: retire() from the pump (CompletionTracker) and the worker's transfer thread
// (JobPipeline), which may both see one failure: the first retires, the second sees it done;
// the queries from any thread. Lock order: retire() takes the instance's mutex (the pump holds
// its task's), and under it the device pairs' locks (which are never held while taking another).
// Memory order: link_failed is stored with release after link_error, the retired slots and the
// path's drop (so the fallback that sees it never negotiates the failed path again), and read
// with acquire.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "runtime/device_pairs.hpp"
#include "runtime/slot_transport.hpp"
#include "runtime/task_instance.hpp"

namespace tandem::detail {

class LinkFailures {
public:
    // `timeout_ms` and `first_job_timeout`: what a worker's allowance is made of
    // (Worker::allowance).
    LinkFailures(const Device& primary, DevicePairs& pairs,
                 const std::atomic<std::int64_t>& timeout_ms,
                 std::chrono::milliseconds first_job_timeout)
        : m_primary(primary), m_pairs(pairs), m_timeout_ms(timeout_ms),
          m_first_job_timeout(first_job_timeout) {}

    // The instance's transport failed: true when its path is to blame (dropped for the pair,
    // the instance's link retired: TaskInstance::link_failed), false when its worker's device
    // is (the caller loses the worker). `from_pump`: the pump noticed it (a slot overdue is
    // then the device's).
    [[nodiscard]] bool retire(TaskInstance& instance, bool from_pump) noexcept;
    // The same for one of its input links (primary -> device): the path is dropped for the pair
    // in that direction, and the instance is retired and prepared again as above, its inputs
    // then on the next path. Called by the job thread whose send failed.
    [[nodiscard]] bool retire_input(TaskInstance& instance, const SlotTransport& link) noexcept;
    // The same for any other link of it, `link` from device `from` to `to`, which `what` names
    // in the event and the log ("its input path ", ...): the path is dropped for that pair.
    // Called by the thread whose hand-off to the link failed.
    [[nodiscard]] bool retire_link(TaskInstance& instance, const SlotTransport& link,
                                   std::uint32_t from, std::uint32_t to,
                                   const std::string& what) noexcept;
    // Why the instance's link failed (empty when it did not).
    [[nodiscard]] static std::string failure(const TaskInstance& instance);
    // The paths dropped for the pair (device, primary), oldest first; then those dropped for its
    // inputs (primary -> device, DroppedTransferPath::inputs).
    [[nodiscard]] std::vector<DroppedTransferPath> dropped_paths(std::uint32_t device) const;
    // The paths dropped from `from` to `to`, oldest first.
    [[nodiscard]] std::vector<DroppedTransferPath> dropped_paths(std::uint32_t from,
                                                                 std::uint32_t to) const {
        return m_pairs.dropped(from, to);
    }

private:
    // retire(), retire_input() and retire_link(): a link of `instance` failed with `error` on
    // `path`, which is dropped for the pair (from, to); `what` names the link ("its transfer
    // path", ...).
    struct FailedLink {
        std::string error;
        std::string path;
        std::uint32_t from = 0;
        std::uint32_t to = 0;
        std::string what;
    };
    [[nodiscard]] bool retire_failed(TaskInstance& instance, bool from_pump,
                                     const FailedLink& link) noexcept;

    const Device& m_primary;
    DevicePairs& m_pairs;
    const std::atomic<std::int64_t>& m_timeout_ms;
    std::chrono::milliseconds m_first_job_timeout;
};

} // namespace tandem::detail
