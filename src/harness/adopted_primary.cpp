#include "harness/adopted_primary.hpp"

#include "core/embedding.hpp"
#include "tandem/error.hpp"

namespace tandem::harness {
namespace {

std::unique_ptr<detail::Device> adopt(const detail::Instance& instance,
                                      const std::vector<detail::Adapter>& adapters,
                                      const PrimaryVulkan& primary, const std::string& label) {
    for (const detail::Adapter& a : adapters) {
        if (a.physical == primary.physical_device) {
            detail::AdoptedDevice adopted;
            adopted.device = primary.device;
            adopted.queue_family = primary.queue_family;
            adopted.queue_index = primary.queue_index;
            adopted.queue_lock = primary.queue_mutex;
            // A runtime's primary has every required feature (the runtime enabled or checked
            // them); no optional extension is claimed, as none is needed to read leases.
            adopted.enabled_features = detail::required_features();
            detail::DeviceOptions options;
            options.label = label;
            return std::make_unique<detail::Device>(instance, a, adopted, options);
        }
    }
    throw Error(ErrorCategory::InvalidArgument,
                "The runtime's primary is not a device of its instance",
                "Pass Runtime::primary_vulkan() as it is");
}

} // namespace

AdoptedPrimary::AdoptedPrimary(const PrimaryVulkan& primary, const std::string& label)
    : m_instance(std::make_unique<detail::Instance>(primary.instance, primary.debug_utils)),
      m_adapters(detail::discover_adapters(*m_instance, 1)),
      m_device(adopt(*m_instance, m_adapters, primary, label)) {}

AdoptedPrimary::~AdoptedPrimary() = default;

} // namespace tandem::harness
