// The sentences that explain a placement decision (Explanation::reason, PlacementPlan::openings),
// and what they explain: one task as decide() works on it (Item) and the devices it may go to
// (Option), which the search in placement.cpp fills. Internal to tandem::sched; plain values of
// one decide() call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sched/explanation.hpp"
#include "sched/placement.hpp"

namespace tandem::detail::placing {

// One device a task may be placed on in this decision.
struct Option {
    std::uint32_t device = 0;
    std::size_t estimate = 0; // index into Explanation::devices
    double charge = 0.0;      // the rule's side for this device, ms per update
    double adjusted = 0.0;    // charge, plus the margin unless this is where the task stays
    double worker_load = 0.0; // execute x rate, fraction of a second (workers only)
    double path_load = 0.0;   // transfer x rate, fraction of a second (workers only)
    bool counts_capacity = true;
};

// One task being decided.
struct Item {
    const PlacementTask* spec = nullptr;
    Explanation explanation;
    std::vector<Option> options; // never empty
    double rate = 0.0;           // 0 for an invalid rate
    std::optional<std::uint32_t> baseline;
    std::string note; // said before the reason (a lost device, an unusable request)
    bool invalid = false;
    // A chain placed as a unit: the item of the chain's first task, whose device this one takes
    // (set on the other members only), and on the first task the other members.
    std::optional<std::size_t> root;
    std::vector<std::size_t> members;
};

// "0.123 ms", "45%", "adapter 2".
[[nodiscard]] std::string ms(double value);
[[nodiscard]] std::string percent(double fraction);
[[nodiscard]] std::string adapter(std::uint32_t device);

// One sentence per physical device opened more than once among `loads`' adapters.
[[nodiscard]] std::vector<std::string> describe_openings(const std::vector<DeviceLoad>& loads,
                                                         const DeviceSet& devices);

// The reason sentences of items[i], placed on `option`'s device: for a chain member, that it
// follows its chain; else why it went there, with the numbers (and for a chain's first task,
// the chain's sums).
[[nodiscard]] std::string explained_reason(const std::vector<Item>& items, std::size_t i,
                                           const Option& option, const PlacementPlan& plan,
                                           const PlacementOptions& options);

} // namespace tandem::detail::placing
