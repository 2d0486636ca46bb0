#include "workloads/workload.hpp"

#include <utility>

#include "tandem/error.hpp"
#include "workloads/pattern.hpp"

namespace tandem::detail {

WorkloadTable::WorkloadTable() {
    m_factories.emplace("pattern", [](const Device& device, const WorkloadParams& params) {
        return std::make_unique<PatternWorkload>(device, params);
    });
}

void WorkloadTable::add(const std::string& name, WorkloadFactory factory) {
    std::lock_guard lock(m_mutex);
    m_factories[name] = std::move(factory);
}

std::vector<std::string> WorkloadTable::names() const {
    std::lock_guard lock(m_mutex);
    std::vector<std::string> names;
    for (const auto& [name, factory] : m_factories) {
        names.push_back(name);
    }
    return names;
}

WorkloadFactory WorkloadTable::find(std::string_view name) const {
    {
        std::lock_guard lock(m_mutex);
        if (auto it = m_factories.find(name); it != m_factories.end()) {
            return it->second;
        }
    }
    std::string known;
    for (const auto& n : names()) {
        known += (known.empty() ? "" : ", ") + n;
    }
    throw Error(ErrorCategory::InvalidArgument, "Workload '" + std::string(name) + "' is not known",
                "Use one of: " + known + ", or give the task a WorkloadFactory of your own");
}

} // namespace tandem::detail
