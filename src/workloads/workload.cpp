#include "workloads/workload.hpp"

#include <algorithm>
#include <map>
#include <mutex>

#include "tandem/error.hpp"
#include "workloads/pattern.hpp"

namespace tandem::detail {
namespace {

struct Registry {
    Registry() {
        factories.emplace("pattern", [](const Device& device, const WorkloadParams& params) {
            return std::make_unique<PatternWorkload>(device, params);
        });
    }
    std::mutex mutex;
    std::map<std::string, WorkloadFactory, std::less<>> factories;
};

Registry& registry() {
    static Registry r; // thread-safe initialisation; the built-in workloads are in from the start
    return r;
}

} // namespace

void register_workload(const std::string& name, WorkloadFactory factory) {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    r.factories[name] = std::move(factory);
}

std::vector<std::string> workload_names() {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    std::vector<std::string> names;
    for (const auto& [name, factory] : r.factories) {
        names.push_back(name);
    }
    return names;
}

WorkloadFactory find_workload(std::string_view name) {
    WorkloadFactory factory;
    {
        Registry& r = registry();
        std::lock_guard lock(r.mutex);
        auto it = r.factories.find(name);
        if (it != r.factories.end()) {
            factory = it->second;
        }
    }
    if (!factory) {
        std::string known;
        for (const auto& n : workload_names()) {
            known += (known.empty() ? "" : ", ") + n;
        }
        throw Error("Workload '" + std::string(name) + "' is not known", "Use one of: " + known);
    }
    return factory;
}

std::unique_ptr<Workload> create_workload(std::string_view name, const Device& device,
                                          const WorkloadParams& params) {
    return find_workload(name)(device, params);
}

} // namespace tandem::detail
