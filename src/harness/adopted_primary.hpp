// AdoptedPrimary: a runtime's primary device as Tandem's internal helpers (resources, command
// pools, the renderer) take it, built from what any application gets (Runtime::primary_vulkan):
// the instance and the device are adopted, not owned, and submissions to the main queue hold
// the runtime's queue lock. Harness-internal: only the harness's .cpp files include this header
// (it speaks in tandem::detail types).
// Threads: one thread at a time. Lifetime: destroy before the runtime.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "core/discovery.hpp"
#include "core/instance.hpp"
#include "tandem/runtime.hpp"

namespace tandem::harness {

class AdoptedPrimary {
public:
    // Throws tandem::Error when `primary` is not a device of its own instance.
    AdoptedPrimary(const PrimaryVulkan& primary, const std::string& label);
    ~AdoptedPrimary();
    AdoptedPrimary(const AdoptedPrimary&) = delete;
    AdoptedPrimary& operator=(const AdoptedPrimary&) = delete;

    [[nodiscard]] const detail::Device& device() const noexcept { return *m_device; }

private:
    std::unique_ptr<detail::Instance> m_instance;
    std::vector<detail::Adapter> m_adapters;
    std::unique_ptr<detail::Device> m_device;
};

} // namespace tandem::harness
