#include "sched/placement_reasons.hpp"

#include <algorithm>
#include <cstdio>

namespace tandem::detail::placing {
namespace {

// Whether reason() lists every worker's exclusion (the task is on the primary and no worker
// could take it), openings included.
bool best_listed_all(const Item& item, const Option& option) {
    const auto& e = item.explanation;
    if (!e.devices[option.estimate].primary) {
        return false;
    }
    return std::none_of(e.devices.begin(), e.devices.end(),
                        [](const DeviceEstimate& d) { return d.candidate && !d.primary; });
}

std::string capitalised(std::string text) {
    if (!text.empty() && text[0] >= 'a' && text[0] <= 'z') {
        text[0] = static_cast<char>(text[0] - 'a' + 'A');
    }
    return text;
}

// What the decision knew of openings of one physical device: each adapter that frees nothing
// because it shares a device with the primary or with the task's device (unless already listed),
// and, where openings are treated as separate, that the chosen worker's move frees nothing real.
std::string openings_sentences(const Item& item, const Option& option, bool listed) {
    const auto& e = item.explanation;
    const auto& chosen = e.devices[option.estimate];
    std::string text;
    for (const auto& d : e.devices) {
        if (!listed && !d.primary && d.device != option.device && d.opening_of &&
            !d.treated_as_separate) {
            text += " " + capitalised(adapter(d.device)) + " is " + d.excluded + ".";
        }
    }
    if (!chosen.primary && chosen.opening_of && !chosen.treated_as_separate) {
        // Only a request for a worker puts a task there.
        text += " " + capitalised(adapter(chosen.device)) + " is " + chosen.excluded +
                ", but a worker was asked for.";
    }
    if (!chosen.primary && chosen.opening_of && chosen.treated_as_separate) {
        const auto of = *chosen.opening_of == e.devices[0].device ? std::string("the primary")
                                                                  : adapter(*chosen.opening_of);
        text += " " + capitalised(adapter(chosen.device)) +
                " is an opening of the same device as " + of +
                ", treated as a separate device as asked (openings_are_separate): on one "
                "device this move frees nothing.";
    }
    return text;
}

// The load of `device`'s physical device: every opening of it counts.
double load_on(const std::vector<DeviceLoad>& loads, std::uint32_t device) {
    for (const auto& l : loads) {
        if (l.device == device) {
            return l.device_load_fraction;
        }
    }
    return 0.0;
}

// Why a task placed by the rule stays on (or goes to) the primary: no worker could take it, the
// best worker's net gain is within the margin, or that worker has no capacity left.
std::string why_on_primary(const Item& item, bool stayed, const std::vector<DeviceLoad>& loads,
                           const PlacementOptions& options) {
    const auto& e = item.explanation;
    // The worker with the largest net gain, if any could take it.
    const DeviceEstimate* best = nullptr;
    for (const auto& d : e.devices) {
        if (d.candidate && !d.primary &&
            (best == nullptr || d.gain_ms - d.charge_ms > best->gain_ms - best->charge_ms)) {
            best = &d;
        }
    }
    if (best == nullptr) {
        std::string reasons;
        for (const auto& d : e.devices) {
            if (!d.primary) {
                reasons += (reasons.empty() ? "" : "; ") + adapter(d.device) +
                           (d.opening_of && !d.treated_as_separate ? " is " : ": ") + d.excluded;
            }
        }
        return "It runs on the primary: no worker can take it" +
               (reasons.empty() ? std::string(" (there are no workers).") : " (" + reasons + ").");
    }
    const double net = best->gain_ms - best->charge_ms;
    const double needed = item.baseline ? e.margin_ms : 0.0;
    if (net <= needed) {
        return std::string(stayed ? "It stays" : "It runs") +
               " on the primary: " + adapter(best->device) + " would free " + ms(best->gain_ms) +
               " per update but moving costs " + ms(best->charge_ms) + " (" +
               describe_move(*best->move) + "), a net gain of " + ms(net) +
               ", not more than the margin " + ms(needed) + ".";
    }
    return "It runs on the primary: " + adapter(best->device) + " would gain " + ms(net) +
           " net per update but has no capacity left (with it, its "
           "load would reach " +
           percent(load_on(loads, best->device) + best->load_fraction) + ", capacity " +
           percent(options.capacity) + ").";
}

// Why a task placed by the rule is on the worker `option` names: what it frees there.
std::string why_on_worker(const Item& item, const Option& option, bool stayed) {
    const auto& e = item.explanation;
    const auto& chosen = e.devices[option.estimate];
    const double net = chosen.gain_ms - chosen.charge_ms;
    if (stayed) {
        return "It stays on " + adapter(option.device) + ": it frees " + ms(chosen.gain_ms) +
               " of primary time per update against a move cost of " + ms(chosen.charge_ms) + " (" +
               describe_move(*chosen.move) + ").";
    }
    return "It runs on " + adapter(option.device) + ": it frees " + ms(chosen.gain_ms) +
           " of primary time per update, more than the move cost of " + ms(chosen.charge_ms) +
           " (" + describe_move(*chosen.move) + ") by " + ms(net) + " (margin " +
           ms(item.baseline ? e.margin_ms : 0.0) + ").";
}

// What the chosen worker beat: the option cheapest on its own, when it is not chosen (within
// the margin, or on a worker whose load is shared). Empty when there is nothing to say.
std::string what_it_beat(const Item& item, const Option& option,
                         const std::vector<DeviceLoad>& loads, const PlacementOptions& options) {
    const auto& e = item.explanation;
    const Option* cheapest = nullptr;
    for (const auto& o : item.options) {
        if (cheapest == nullptr || o.charge < cheapest->charge) {
            cheapest = &o;
        }
    }
    if (cheapest == nullptr || cheapest->device == option.device ||
        !(cheapest->charge < option.charge - 1e-12)) {
        return {};
    }
    const auto& d = e.devices[cheapest->estimate];
    const auto name = d.primary ? std::string("the primary") : adapter(d.device);
    if (cheapest->adjusted >= option.adjusted - 1e-12) {
        return " On " + name + " it would cost only " + ms(option.charge - cheapest->charge) +
               " less per update, within the margin " + ms(e.margin_ms) + ", so it does not move.";
    }
    if (!d.primary) {
        return " On " + name + " it would cost " + ms(option.charge - cheapest->charge) +
               " less per update, but the load is shared: with it, " + name + " would reach " +
               percent(load_on(loads, d.device) + cheapest->worker_load) + " (capacity " +
               percent(options.capacity) + ").";
    }
    return {};
}

// One or two sentences saying why `item` went to `option`'s device, with the numbers.
std::string reason(const Item& item, const Option& option, const std::vector<DeviceLoad>& loads,
                   const PlacementOptions& options) {
    const auto& e = item.explanation;
    const auto& chosen = e.devices[option.estimate];
    const bool stayed = e.previous && *e.previous == option.device;
    std::string why;
    using Kind = PlacementKind;
    if (!item.invalid && !item.spec->held.empty() && e.request.kind != Kind::Auto &&
        item.note.empty()) {
        why = item.spec->held + " It stays on " +
              (chosen.primary ? std::string("the primary") : adapter(option.device)) + ".";
    } else if (item.invalid || (e.request.kind == Kind::Primary)) {
        why = item.invalid ? "" : "Manual placement: it runs on the primary as requested.";
    } else if (e.request.kind == Kind::Device && item.note.empty()) {
        why = "Manual placement: it runs on " + adapter(option.device) + " as requested.";
        const double load = load_on(loads, option.device);
        if (!chosen.primary && load > options.capacity) {
            why += " " + adapter(option.device) + " is loaded to " + percent(load) +
                   " of a second (capacity " + percent(options.capacity) +
                   "), so update rates there may not be met.";
        }
    } else if (e.request.kind == Kind::Worker && !chosen.primary) {
        why = "Requested on a worker: " + adapter(option.device) + " moves it for " +
              ms(chosen.charge_ms) + " per update (" + describe_move(*chosen.move) +
              ") and has capacity left.";
    } else if (chosen.primary) {
        why = why_on_primary(item, stayed, loads, options);
    } else {
        why = why_on_worker(item, option, stayed);
    }
    const bool manual =
        e.request.kind == Kind::Primary || (e.request.kind == Kind::Device && item.note.empty());
    if (!item.invalid && !manual && !chosen.primary) {
        why += what_it_beat(item, option, loads, options);
    }
    if (!manual) {
        why += openings_sentences(item, option, best_listed_all(item, option));
    }
    return why;
}

// The sentence a chain's first task adds: the members, and the chain's cost on each device it
// could go to (the sums the decision weighed).
std::string chain_sentence(const std::vector<Item>& items, const Item& item, const Option& chosen) {
    std::string names;
    for (std::size_t k = 0; k < item.members.size(); ++k) {
        names += (k == 0                         ? "'"
                  : k + 1 == item.members.size() ? "' and '"
                                                 : "', '") +
                 items[item.members[k]].spec->name;
    }
    std::string costs;
    for (const auto& o : item.options) {
        const bool primary = item.explanation.devices[o.estimate].primary;
        costs += (costs.empty() ? "on " : ", on ") +
                 (primary ? "the primary " + ms(o.charge) + " of execution"
                          : adapter(o.device) + " " + ms(o.charge) + " of deliveries") +
                 (o.device == chosen.device ? " (chosen)" : "");
    }
    return " It heads a chain placed as a unit with " + names +
           "' (reading its output on its device, copying nothing): the decision weighed the "
           "chain's costs together, per update " +
           costs + ".";
}

} // namespace

std::string ms(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.3f ms", value);
    return buffer;
}

std::string percent(double fraction) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.0f%%", fraction * 100.0);
    return buffer;
}

std::string adapter(std::uint32_t device) {
    return "adapter " + std::to_string(device);
}

std::vector<std::string> describe_openings(const std::vector<DeviceLoad>& loads,
                                           const DeviceSet& devices) {
    std::vector<std::string> out;
    std::vector<bool> told(loads.size(), false);
    for (std::size_t i = 0; i < loads.size(); ++i) {
        if (told[i]) {
            continue;
        }
        std::vector<std::string> names{loads[i].primary
                                           ? "the primary (" + adapter(loads[i].device) + ")"
                                           : adapter(loads[i].device)};
        for (std::size_t j = i + 1; j < loads.size(); ++j) {
            if (devices.one_device(loads[i].device, loads[j].device)) {
                told[j] = true;
                names.push_back(adapter(loads[j].device));
            }
        }
        if (names.size() < 2) {
            continue;
        }
        std::string list;
        for (std::size_t k = 0; k < names.size(); ++k) {
            list += (k == 0 ? "" : k + 1 == names.size() ? " and " : ", ") + names[k];
        }
        out.push_back(capitalised(list) + " are openings of one physical device" +
                      (devices.openings_are_separate
                           ? ", treated as separate devices as asked (openings_are_separate): "
                             "moves between them are made, but free nothing real."
                           : " and share its capacity: moving a task between them frees "
                             "nothing."));
    }
    return out;
}

std::string explained_reason(const std::vector<Item>& items, std::size_t i, const Option& option,
                             const PlacementPlan& plan, const PlacementOptions& options) {
    const Item& item = items[i];
    if (item.root) {
        return item.note + "Placed with '" + item.spec->with +
               "', whose output it reads on the same device, copying nothing: a chain "
               "is placed as a unit (the decision is explained at '" +
               items[*item.root].spec->name + "').";
    }
    // A chain's first task placed auto went where the chain's sums put it, which its own
    // figures do not explain.
    const bool chained_auto =
        !item.members.empty() && item.spec->request.kind == PlacementKind::Auto;
    const std::uint32_t primary = plan.devices[0].device;
    std::string why = item.note +
                      (chained_auto ? "It runs on " +
                                          (option.device == primary ? std::string("the primary")
                                                                    : adapter(option.device)) +
                                          "."
                                    : reason(item, option, plan.devices, options)) +
                      (item.members.empty() ? std::string() : chain_sentence(items, item, option));
    if (!why.empty() && why[0] >= 'a' && why[0] <= 'z') {
        why[0] = static_cast<char>(why[0] - 'a' + 'A');
    }
    return why;
}

} // namespace tandem::detail::placing
