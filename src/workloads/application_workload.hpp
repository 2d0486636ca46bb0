// ApplicationWorkload: an application's tandem::Workload (tandem/workload.hpp) behind the
// runtime's Workload interface. It makes the application's object from its factory with the
// device's WorkerContext, hands each job to it as a RecordContext and turns what it throws into a
// failure the runtime reports for the task (failure()), never an exception on a Tandem thread.
//
// While the factory runs, on its thread, the Device it was called for can be found from the
// WorkerContext's VkDevice (application_device): Tandem's own public workloads
// (tandem::capture_workload) draw with the internal renderer, which needs it. The Device
// outlives the workload the factory makes.
//
// Threads: as Workload; failure() from any thread.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "tandem/workload.hpp"
#include "workloads/workload.hpp"

namespace tandem::detail {

// The Device behind `device`, the VkDevice of the WorkerContext a workload factory was given,
// during that factory call on its thread; nullptr anywhere else.
[[nodiscard]] const Device* application_device(VkDevice device) noexcept;

class ApplicationWorkload final : public Workload {
public:
    // Calls `factory` (may throw: what it throws fails the task's preparation).
    ApplicationWorkload(const tandem::WorkloadFactory& factory, VkInstance instance,
                        const Device& device, const WorkloadParams& params);

    [[nodiscard]] VkImageUsageFlags target_usage() const noexcept override { return m_usage; }
    [[nodiscard]] WorkloadOutput output() const noexcept override { return m_output; }
    [[nodiscard]] std::string check(std::span<const std::byte> snapshot) const override;
    [[nodiscard]] VkResult record(VkCommandBuffer cmd, std::uint32_t slot,
                                  const WorkloadTarget& target, std::uint64_t generation,
                                  std::span<const std::byte> snapshot) noexcept override;
    void completed(std::uint32_t slot, std::uint64_t generation) noexcept override;
    [[nodiscard]] std::string failure() const override;

private:
    std::unique_ptr<tandem::Workload> m_workload;
    VkImageUsageFlags m_usage = 0;
    WorkloadOutput m_output;
    mutable std::mutex m_mutex;
    std::string m_failure; // guarded by m_mutex
};

} // namespace tandem::detail
