#include "sched/placement.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "sched/placement_reasons.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {

namespace {

using placing::adapter;
using placing::describe_openings;
using placing::explained_reason;
using placing::Item;
using placing::Option;
using placing::percent;

constexpr double k_infinity = std::numeric_limits<double>::infinity();

struct Loads {
    std::vector<double> worker; // by worker slot
    std::vector<double> path;
    std::vector<bool> holds_capacity_task;
};

// Capacity slot of each adapter index in DeviceSet::workers: one per physical device, shared by
// its openings (npos for the primary, openings of its device, and others).
constexpr std::size_t k_no_slot = static_cast<std::size_t>(-1);

class Search {
public:
    Search(std::vector<Item>& items, const std::vector<std::size_t>& slot_of,
           std::size_t worker_count, const PlacementOptions& options)
        : m_items(items), m_slot_of(slot_of), m_workers(worker_count), m_options(options) {}

    // Fills `choice` (option index per item); returns "exhaustive" or "greedy".
    std::string run(std::vector<std::size_t>& choice) {
        double leaves = 1.0;
        for (const auto& item : m_items) {
            leaves *= item.root ? 1.0 : static_cast<double>(item.options.size());
        }
        if (leaves <= static_cast<double>(m_options.exhaustive_limit)) {
            m_current.assign(m_items.size(), 0);
            Loads loads{std::vector<double>(m_workers, 0.0), std::vector<double>(m_workers, 0.0),
                        std::vector<bool>(m_workers, false)};
            descend(0, loads, 0.0, 0);
            choice = m_best;
            return "exhaustive";
        }
        greedy(choice);
        return "greedy";
    }

private:
    [[nodiscard]] std::size_t slot(std::uint32_t device) const {
        return device < m_slot_of.size() ? m_slot_of[device] : k_no_slot;
    }

    // How far past capacity the workers that hold a capacity-bound task are (0 when every
    // constraint holds). Only grows as tasks are added, so it can prune the search.
    [[nodiscard]] double overload(const Loads& loads) const {
        double total = 0.0;
        for (std::size_t s = 0; s < m_workers; ++s) {
            if (loads.holds_capacity_task[s]) {
                total += std::max(0.0, loads.worker[s] - m_options.capacity) +
                         std::max(0.0, loads.path[s] - m_options.capacity);
            }
        }
        return total;
    }

    // Every assignment, pruned by overload: the constraints are kept whenever some assignment
    // keeps them; when none does (tasks requested on workers that cannot hold them all), the
    // least overloaded one wins.
    void descend(std::size_t index, Loads& loads, double objective, std::size_t moves) {
        const double over = overload(loads);
        if (m_found && over > m_best_overload + 1e-12) {
            return;
        }
        if (index == m_items.size()) {
            const double utilisation =
                m_workers == 0 ? 0.0 : *std::max_element(loads.worker.begin(), loads.worker.end());
            if (!m_found || better(over, objective, utilisation, moves)) {
                m_found = true;
                m_best = m_current;
                m_best_overload = over;
                m_best_objective = objective;
                m_best_utilisation = utilisation;
                m_best_moves = moves;
            }
            return;
        }
        const auto& item = m_items[index];
        if (item.root) {
            m_current[index] = 0; // where its chain's first task goes (its costs are counted there)
            descend(index + 1, loads, objective, moves);
            return;
        }
        for (std::size_t o = 0; o < item.options.size(); ++o) {
            const auto& option = item.options[o];
            const auto s = slot(option.device);
            bool held = false;
            if (s != k_no_slot) {
                loads.worker[s] += option.worker_load;
                loads.path[s] += option.path_load;
                held = loads.holds_capacity_task[s];
                loads.holds_capacity_task[s] = held || option.counts_capacity;
            }
            m_current[index] = o;
            const bool moved = item.explanation.previous.has_value() &&
                               *item.explanation.previous != option.device;
            descend(index + 1, loads, objective + item.rate * option.adjusted,
                    moves + (moved ? 1 : 0));
            if (s != k_no_slot) {
                loads.worker[s] -= option.worker_load;
                loads.path[s] -= option.path_load;
                loads.holds_capacity_task[s] = held;
            }
        }
    }

    // Less overload first; then lower objective (primary time per second, margins included);
    // then the more even spread over workers; then fewer moves.
    [[nodiscard]] bool better(double over, double objective, double utilisation,
                              std::size_t moves) const {
        if (over < m_best_overload - 1e-12) {
            return true;
        }
        if (over > m_best_overload + 1e-12) {
            return false;
        }
        const double tolerance = 1e-9 * std::max(1.0, std::abs(m_best_objective));
        if (objective < m_best_objective - tolerance) {
            return true;
        }
        if (objective > m_best_objective + tolerance) {
            return false;
        }
        if (utilisation < m_best_utilisation - 1e-9) {
            return true;
        }
        if (utilisation > m_best_utilisation + 1e-9) {
            return false;
        }
        return moves < m_best_moves;
    }

    // Largest gain first: each task takes its cheapest device with capacity left.
    void greedy(std::vector<std::size_t>& choice) {
        choice.assign(m_items.size(), 0);
        std::vector<std::size_t> order(m_items.size());
        std::vector<double> urgency(m_items.size(), 0.0);
        for (std::size_t i = 0; i < m_items.size(); ++i) {
            order[i] = i;
            const auto& options = m_items[i].options;
            double worst = 0.0;
            double best = k_infinity;
            for (const auto& o : options) {
                worst = std::max(worst, o.adjusted);
                best = std::min(best, o.adjusted);
            }
            // Single-option tasks first (their load is fixed), then by the most to gain.
            urgency[i] = options.size() == 1 ? k_infinity : m_items[i].rate * (worst - best);
        }
        std::stable_sort(order.begin(), order.end(),
                         [&](std::size_t a, std::size_t b) { return urgency[a] > urgency[b]; });
        Loads loads{std::vector<double>(m_workers, 0.0), std::vector<double>(m_workers, 0.0),
                    std::vector<bool>(m_workers, false)};
        for (const auto i : order) {
            const auto& item = m_items[i];
            if (item.root) {
                continue; // where its chain's first task goes
            }
            std::optional<std::size_t> pick;
            std::optional<std::size_t> least_loaded;
            for (std::size_t o = 0; o < item.options.size(); ++o) {
                const auto& option = item.options[o];
                const auto s = slot(option.device);
                bool ok = true;
                if (s != k_no_slot && option.counts_capacity) {
                    ok = loads.worker[s] + option.worker_load <= m_options.capacity + 1e-12 &&
                         loads.path[s] + option.path_load <= m_options.capacity + 1e-12;
                    if (!least_loaded ||
                        loads.worker[s] < loads.worker[slot(item.options[*least_loaded].device)]) {
                        least_loaded = o;
                    }
                }
                if (ok && (!pick || option.adjusted < item.options[*pick].adjusted)) {
                    pick = o;
                }
            }
            const std::size_t o = pick ? *pick : least_loaded.value_or(0);
            choice[i] = o;
            const auto s = slot(item.options[o].device);
            if (s != k_no_slot) {
                loads.worker[s] += item.options[o].worker_load;
                loads.path[s] += item.options[o].path_load;
            }
        }
    }

    std::vector<Item>& m_items;
    const std::vector<std::size_t>& m_slot_of;
    std::size_t m_workers;
    const PlacementOptions& m_options;
    std::vector<std::size_t> m_current;
    std::vector<std::size_t> m_best;
    bool m_found = false;
    double m_best_overload = k_infinity;
    double m_best_objective = k_infinity;
    double m_best_utilisation = k_infinity;
    std::size_t m_best_moves = 0;
};

// `item` on the device of its estimate `estimate` (the adjusted charge is set once the
// baseline is known).
Option option_of(const Item& item, std::size_t estimate, bool counts_capacity) {
    const auto& d = item.explanation.devices[estimate];
    Option o;
    o.device = d.device;
    o.estimate = estimate;
    o.charge = d.charge_ms;
    o.worker_load = d.primary ? 0.0 : d.load_fraction;
    o.path_load = d.move ? d.move->path_ms() * item.rate / 1000.0 : 0.0;
    o.counts_capacity = counts_capacity && !d.primary;
    return o;
}

// Chains placed as a unit: each item `with` another (auto, naming an item of this decision)
// joins the chain of that item's first task, whose options then carry the whole chain's costs:
// each member's option on the same device added (on a worker, each one's delivery to the
// primary). A member that has no option on a device adds nothing there when only its costs are
// unknown; for any other reason (a lost device, a manual placement, no capacity left) the chain
// does not go there.
void group_chains(std::vector<Item>& items, const DeviceSet& devices) {
    std::map<std::string, std::size_t> index_of;
    for (std::size_t i = 0; i < items.size(); ++i) {
        index_of.emplace(items[i].spec->name, i);
    }
    auto next = [&](std::size_t i) -> std::optional<std::size_t> {
        const PlacementTask& spec = *items[i].spec;
        if (spec.with.empty() || spec.request.kind != PlacementKind::Auto || items[i].invalid) {
            return std::nullopt;
        }
        const auto it = index_of.find(spec.with);
        return it == index_of.end() || it->second == i ? std::nullopt
                                                       : std::optional<std::size_t>(it->second);
    };
    for (std::size_t i = 0; i < items.size(); ++i) {
        std::size_t root = i;
        // Chains have no cycles; the bound only guards a malformed decision.
        for (std::size_t steps = 0; steps < items.size(); ++steps) {
            const auto up = next(root);
            if (!up || *up == i) {
                break;
            }
            root = *up;
        }
        if (root != i) {
            items[i].root = root;
            items[root].members.push_back(i);
        }
    }
    for (auto& item : items) {
        if (item.members.empty()) {
            continue;
        }
        std::vector<Option> kept;
        for (Option o : item.options) {
            bool possible = true;
            for (const std::size_t m : item.members) {
                const Item& member = items[m];
                const auto same =
                    std::find_if(member.options.begin(), member.options.end(),
                                 [&](const Option& x) { return x.device == o.device; });
                if (same != member.options.end()) {
                    o.charge += same->charge;
                    o.adjusted += same->adjusted;
                    o.worker_load += same->worker_load;
                    o.path_load += same->path_load;
                    o.counts_capacity = o.counts_capacity || same->counts_capacity;
                    continue;
                }
                const auto& e = member.explanation;
                const auto estimate =
                    std::find_if(e.devices.begin(), e.devices.end(),
                                 [&](const auto& d) { return d.device == o.device; });
                const bool unknown =
                    estimate != e.devices.end() && !devices.is_lost(o.device) &&
                    !(estimate->opening_of && !estimate->treated_as_separate) &&
                    (!estimate->execute || !estimate->move || !e.devices[0].execute);
                possible = possible && unknown;
            }
            if (possible) {
                kept.push_back(o);
            }
        }
        if (!kept.empty()) {
            item.options = std::move(kept);
        } // else its own options: its members follow it wherever it goes
    }
}

// Each chain member's option where its chain's first task was placed (made when it had none
// there: a member follows its chain wherever that goes).
void follow_chains(std::vector<Item>& items, std::vector<std::size_t>& choice) {
    for (std::size_t i = 0; i < items.size(); ++i) {
        Item& item = items[i];
        if (!item.root) {
            continue;
        }
        const std::uint32_t device = items[*item.root].options[choice[*item.root]].device;
        const auto same = std::find_if(item.options.begin(), item.options.end(),
                                       [&](const Option& o) { return o.device == device; });
        if (same != item.options.end()) {
            choice[i] = static_cast<std::size_t>(same - item.options.begin());
            continue;
        }
        const auto& e = item.explanation;
        for (std::size_t d = 0; d < e.devices.size(); ++d) {
            if (e.devices[d].device == device) {
                Option o = option_of(item, d, false);
                o.adjusted = o.charge;
                item.options.push_back(o);
                choice[i] = item.options.size() - 1;
                break;
            }
        }
    }
}

// The distinct workers of a decision (the primary excluded) and their capacity slots: one per
// physical device, its openings sharing it; openings of the primary's device have none (their
// load is the primary's, which no capacity bounds).
struct WorkerSlots {
    std::vector<std::uint32_t> workers;
    std::vector<std::size_t> slot_of;                 // by adapter index; k_no_slot for none
    std::vector<std::uint32_t> slot_owner;            // the first worker of each slot
    std::map<std::uint32_t, std::size_t> position_of; // worker -> index in `workers`
};

WorkerSlots worker_slots(const DeviceSet& devices) {
    WorkerSlots out;
    const auto primary = devices.primary;
    for (const auto w : devices.workers) {
        if (w != primary &&
            std::find(out.workers.begin(), out.workers.end(), w) == out.workers.end()) {
            out.workers.push_back(w);
        }
    }
    for (std::size_t i = 0; i < out.workers.size(); ++i) {
        const auto w = out.workers[i];
        out.position_of[w] = i;
        if (w >= out.slot_of.size()) {
            out.slot_of.resize(w + 1, k_no_slot);
        }
        if (devices.share_capacity(w, primary)) {
            continue;
        }
        const auto shared =
            std::find_if(out.slot_owner.begin(), out.slot_owner.end(),
                         [&](auto owner) { return devices.share_capacity(w, owner); });
        out.slot_of[w] = static_cast<std::size_t>(shared - out.slot_owner.begin());
        if (shared == out.slot_owner.end()) {
            out.slot_owner.push_back(w);
        }
    }
    return out;
}

// Makes one task's Item: its estimate on every device, the options its request allows, and its
// hysteresis baseline.
class ItemBuilder {
public:
    ItemBuilder(const CostModel& model, const PlacementOptions& options, const DeviceSet& devices,
                const std::vector<std::uint32_t>& workers)
        : m_model(model), m_options(options), m_devices(devices), m_workers(workers) {}

    [[nodiscard]] Item build(const PlacementTask& spec,
                             std::optional<std::uint32_t> previous) const {
        Item item;
        item.spec = &spec;
        auto& e = item.explanation;
        e.task = spec.name;
        e.shape = spec.shape;
        e.request = spec.request;
        e.rate_hz = spec.rate_hz;
        e.previous = previous;
        item.invalid = !std::isfinite(spec.rate_hz) || spec.rate_hz <= 0.0;
        item.rate = item.invalid ? 0.0 : spec.rate_hz;
        add_estimates(item);
        add_options(item);
        set_baseline(item);
        return item;
    }

private:
    [[nodiscard]] bool live(std::uint32_t device) const {
        return device == m_devices.primary ||
               (m_devices.is_worker(device) && !m_devices.is_lost(device));
    }

    // The worker the task runs on now, if any: its device's other openings free nothing more.
    [[nodiscard]] std::optional<std::uint32_t> here(const Item& item) const {
        const auto& previous = item.explanation.previous;
        return previous && *previous != m_devices.primary && live(*previous) ? previous
                                                                             : std::nullopt;
    }

    // Estimates: the primary first, then each worker.
    void add_estimates(Item& item) const {
        const PlacementTask& spec = *item.spec;
        auto& e = item.explanation;
        DeviceEstimate p;
        p.device = m_devices.primary;
        p.primary = true;
        p.candidate = true;
        p.execute = m_model.execute(spec.name, spec.shape, m_devices.primary);
        p.charge_ms = p.execute ? p.execute->ms : 0.0;
        p.load_fraction = p.charge_ms * item.rate / 1000.0;
        e.devices.push_back(p);
        e.margin_ms = std::max(m_options.margin_ms, m_options.margin_fraction * p.charge_ms);
        for (const auto w : m_workers) {
            e.devices.push_back(worker_estimate(item, w));
        }
    }

    [[nodiscard]] DeviceEstimate worker_estimate(const Item& item, std::uint32_t w) const {
        const PlacementTask& spec = *item.spec;
        const auto primary = m_devices.primary;
        const DeviceEstimate& p = item.explanation.devices[0];
        DeviceEstimate d;
        d.device = w;
        if (m_devices.is_lost(w)) {
            d.excluded = "the device was lost";
            return d;
        }
        const auto now_on = here(item);
        if (m_devices.one_device(w, primary)) {
            d.opening_of = primary;
        } else if (now_on && m_devices.one_device(w, *now_on)) {
            d.opening_of = now_on;
        }
        d.treated_as_separate = d.opening_of.has_value() && m_devices.openings_are_separate;
        const bool shares_primary = d.opening_of == primary && !d.treated_as_separate;
        d.execute = m_model.execute(spec.name, spec.shape, w);
        const auto path = m_devices.path_of(w);
        d.move = m_model.move(spec.name, spec.shape, w, primary, path);
        // On an opening of the primary's device the work stays on the primary's device.
        d.gain_ms = shares_primary ? 0.0 : p.charge_ms;
        if (d.move) {
            d.charge_ms = d.move->total_ms();
        }
        if (d.execute) {
            d.load_fraction = d.execute->ms * item.rate / 1000.0;
        }
        d.excluded = exclusion(item, d, path, p.execute.has_value());
        d.candidate = d.excluded.empty();
        return d;
    }

    // Why the task cannot be placed on worker estimate `d` this decision; empty when it can.
    [[nodiscard]] std::string exclusion(const Item& item, const DeviceEstimate& d,
                                        const std::optional<TransferPath>& path,
                                        bool gain_known) const {
        const PlacementTask& spec = *item.spec;
        const double path_load = d.move ? d.move->path_ms() * item.rate / 1000.0 : 0.0;
        if (d.opening_of && !d.treated_as_separate) {
            const bool shares_primary = d.opening_of == m_devices.primary;
            return "an opening of the same device as " +
                   (shares_primary ? std::string("the primary")
                                   : adapter(*d.opening_of) + ", where the task runs") +
                   ": moving there frees nothing";
        }
        if (!d.execute) {
            return "no cost is known for \"" + spec.shape.kind +
                   "\" on this device yet (the runtime measures it with trial jobs; "
                   "a profile from `tandem calibrate` predicts it)";
        }
        if (!d.move) {
            return path ? std::string("the transfer path ") + to_string(*path) +
                              " the pair uses was not measured for it"
                        : "no transfer path to the primary was measured";
        }
        if (d.load_fraction > m_options.capacity || path_load > m_options.capacity) {
            char rate[32];
            std::snprintf(rate, sizeof rate, "%g", item.rate);
            return std::string("at ") + rate + " Hz it alone would need " +
                   percent(std::max(d.load_fraction, path_load)) +
                   " of the device or its transfer path, more than its capacity of " +
                   percent(m_options.capacity);
        }
        if (!gain_known) {
            return "the primary's cost of \"" + spec.shape.kind +
                   "\" is unknown, so no gain can be predicted";
        }
        return {};
    }

    // The request as it can be met: an invalid rate runs on the primary, a device that is not
    // available is placed automatically (each said in the item's note).
    [[nodiscard]] PlacementKind effective_request(Item& item) const {
        const PlacementTask& spec = *item.spec;
        PlacementKind kind = spec.request.kind;
        const std::uint32_t requested = spec.request.adapter.value_or(~0u);
        if (item.invalid) {
            item.note = "Its update rate is not a positive finite number, so it runs on the "
                        "primary. ";
            kind = PlacementKind::Primary;
        }
        if (kind == PlacementKind::Device && !live(requested)) {
            item.note = "The requested " +
                        (spec.request.adapter ? adapter(requested)
                                              : "device \"" + spec.request.device + "\"") +
                        " is " + (m_devices.is_lost(requested) ? "lost" : "not available") +
                        ", so it is placed automatically. ";
            kind = PlacementKind::Auto;
        }
        return kind;
    }

    void add_options(Item& item) const {
        const auto& e = item.explanation;
        const std::uint32_t requested = item.spec->request.adapter.value_or(~0u);
        switch (effective_request(item)) {
        case PlacementKind::Primary:
            item.options.push_back(option_of(item, 0, false));
            break;
        case PlacementKind::Device:
            for (std::size_t i = 0; i < e.devices.size(); ++i) {
                if (e.devices[i].device == requested) {
                    item.options.push_back(option_of(item, i, false));
                }
            }
            break;
        case PlacementKind::Worker: {
            const auto now_on = here(item);
            for (std::size_t i = 1; i < e.devices.size(); ++i) {
                const auto& d = e.devices[i];
                // Any worker may be asked for, but not a hop between openings of one device.
                const bool hop = now_on && m_devices.share_capacity(d.device, *now_on);
                if (d.execute && d.move && live(d.device) && !hop) {
                    item.options.push_back(option_of(item, i, true));
                }
            }
            if (item.options.empty()) {
                item.note = "No live worker can run it, so it runs on the primary. ";
                item.options.push_back(option_of(item, 0, false));
            }
            break;
        }
        case PlacementKind::Auto:
            item.options.push_back(option_of(item, 0, false));
            for (std::size_t i = 1; i < e.devices.size(); ++i) {
                if (e.devices[i].candidate) {
                    item.options.push_back(option_of(item, i, true));
                }
            }
            break;
        }
    }

    // Hysteresis baseline: where the task stays unless another device is better by the
    // margin. A task seen for the first time starts from the primary (the rule's side);
    // one whose device is gone has no baseline and moves at once.
    void set_baseline(Item& item) const {
        auto& e = item.explanation;
        if (e.previous && !live(*e.previous)) {
            e.lost_move = true;
            item.note = adapter(*e.previous) +
                        (m_devices.is_lost(*e.previous) ? " was lost" : " is no longer available") +
                        ": the task moves in this decision and its last good output stays "
                        "visible until the new device publishes. " +
                        item.note;
        } else {
            const auto start = e.previous.value_or(m_devices.primary);
            for (const auto& o : item.options) {
                if (o.device == start) {
                    item.baseline = start;
                }
            }
        }
        for (auto& o : item.options) {
            o.adjusted =
                o.charge + (item.baseline && *item.baseline != o.device ? e.margin_ms : 0.0);
        }
    }

    const CostModel& m_model;
    const PlacementOptions& m_options;
    const DeviceSet& m_devices;
    const std::vector<std::uint32_t>& m_workers;
};

// Each device's tasks and load under the chosen assignment, and the primary's predicted frame
// time (its own frames, plus each task's primary-side cost amortised over its frames).
void add_device_loads(PlacementPlan& plan, const std::vector<Item>& items,
                      const std::vector<std::size_t>& choice, const DeviceSet& devices,
                      const WorkerSlots& slots, const PlacementOptions& options) {
    const auto primary = devices.primary;
    DeviceLoad primary_load;
    primary_load.device = primary;
    primary_load.primary = true;
    plan.devices.push_back(primary_load);
    for (const auto w : slots.workers) {
        DeviceLoad load;
        load.device = w;
        load.lost = devices.is_lost(w);
        load.capacity = devices.share_capacity(w, primary) ? 0.0 : options.capacity;
        plan.devices.push_back(load);
    }
    double frame_ms = options.primary_base_frame_ms;
    const double per_frame =
        options.primary_frame_rate_hz > 0.0 ? 1.0 / options.primary_frame_rate_hz : 0.0;
    for (std::size_t i = 0; i < items.size(); ++i) {
        const auto& option = items[i].options[choice[i]];
        const auto& estimate = items[i].explanation.devices[option.estimate];
        auto& load = option.device == primary
                         ? plan.devices[0]
                         : plan.devices[1 + slots.position_of.at(option.device)];
        load.tasks.push_back(items[i].spec->name);
        if (estimate.execute) {
            load.load_fraction += estimate.execute->ms * items[i].rate / 1000.0;
        }
        if (option.device == primary) {
            frame_ms += estimate.charge_ms * items[i].rate * per_frame;
        } else if (estimate.move) {
            frame_ms += estimate.move->primary_ms() * items[i].rate * per_frame;
        }
    }
    plan.predicted_primary_frame_ms = frame_ms;
}

// Openings of one device count together: against the primary's second where they share its
// device, else against one worker capacity.
void add_shared_loads(PlacementPlan& plan, const DeviceSet& devices,
                      const PlacementOptions& options) {
    const double base_load = options.primary_base_frame_ms * options.primary_frame_rate_hz / 1000.0;
    for (auto& d : plan.devices) {
        d.device_load_fraction = d.load_fraction;
        for (const auto& other : plan.devices) {
            if (devices.share_capacity(d.device, other.device)) {
                d.shares_with.push_back(other.device);
                d.device_load_fraction += other.load_fraction;
            }
        }
        const bool primary_device = d.primary || devices.share_capacity(d.device, devices.primary);
        d.over_capacity = primary_device ? d.device_load_fraction + base_load > 1.0
                                         : d.device_load_fraction > options.capacity + 1e-9;
    }
    plan.openings_are_separate = devices.openings_are_separate;
    plan.openings = describe_openings(plan.devices, devices);
}

// Each item's explanation completed with where it goes, moved into the plan.
void add_explanations(PlacementPlan& plan, std::vector<Item>& items,
                      const std::vector<std::size_t>& choice, const PlacementOptions& options) {
    for (std::size_t i = 0; i < items.size(); ++i) {
        auto& item = items[i];
        auto& e = item.explanation;
        const auto& option = item.options[choice[i]];
        e.chosen = option.device;
        e.moved = e.previous.has_value() && *e.previous != e.chosen;
        if (item.root) {
            e.with = item.spec->with;
        }
        for (const std::size_t m : item.members) {
            e.chain.push_back(items[m].spec->name);
        }
        if (options.explain) {
            e.reason = explained_reason(items, i, option, plan, options);
        }
        plan.tasks.push_back(std::move(e));
    }
}

} // namespace

void check_placement_task(const PlacementTask& task) {
    if (!std::isfinite(task.rate_hz) || task.rate_hz <= 0.0) {
        throw Error(ErrorCategory::InvalidArgument,
                    "task \"" + task.name + "\" has an update rate of " +
                        std::to_string(task.rate_hz) + " Hz",
                    "Give a positive finite rate in Hz");
    }
    if (task.shape.kind.empty() || task.shape.width == 0 || task.shape.height == 0) {
        throw Error(ErrorCategory::InvalidArgument,
                    "task \"" + task.name + "\" has no workload kind or an empty size",
                    "Give the task a kind and a non-zero width and height");
    }
}

bool DeviceSet::is_lost(std::uint32_t device) const noexcept {
    return std::find(lost.begin(), lost.end(), device) != lost.end();
}

std::optional<TransferPath> DeviceSet::path_of(std::uint32_t worker) const {
    const auto it = worker_paths.find(worker);
    if (it != worker_paths.end()) {
        return it->second;
    }
    return forced_path;
}

bool DeviceSet::is_worker(std::uint32_t device) const noexcept {
    return device != primary && std::find(workers.begin(), workers.end(), device) != workers.end();
}

void DeviceSet::identify(const std::vector<DeviceInfo>& adapters) {
    for (const auto& a : adapters) {
        device_uuids[a.index] = a.device_uuid;
    }
}

bool DeviceSet::one_device(std::uint32_t a, std::uint32_t b) const {
    const auto ia = device_uuids.find(a);
    const auto ib = device_uuids.find(b);
    return a != b && ia != device_uuids.end() && ib != device_uuids.end() &&
           ia->second == ib->second;
}

bool DeviceSet::share_capacity(std::uint32_t a, std::uint32_t b) const {
    return !openings_are_separate && one_device(a, b);
}

Placer::Placer(const CostModel& model, PlacementOptions options)
    : m_model(&model), m_options(options) {}

PlacementPlan Placer::decide(const std::vector<PlacementTask>& tasks, const DeviceSet& devices) {
    PlacementPlan plan;
    plan.decision = ++m_decisions;
    const WorkerSlots slots = worker_slots(devices);
    const ItemBuilder builder(*m_model, m_options, devices, slots.workers);
    std::vector<Item> items;
    items.reserve(tasks.size());
    for (const auto& spec : tasks) {
        const auto it = m_current.find(spec.name);
        items.push_back(builder.build(
            spec, it != m_current.end() ? std::optional<std::uint32_t>(it->second) : std::nullopt));
    }

    group_chains(items, devices);
    std::vector<std::size_t> choice;
    plan.method = Search(items, slots.slot_of, slots.slot_owner.size(), m_options).run(choice);
    follow_chains(items, choice);

    add_device_loads(plan, items, choice, devices, slots, m_options);
    add_shared_loads(plan, devices, m_options);
    add_explanations(plan, items, choice, m_options);
    std::map<std::string, std::uint32_t> next;
    for (const auto& e : plan.tasks) {
        next[e.task] = e.chosen;
    }
    m_current = std::move(next);
    return plan;
}

} // namespace tandem::detail
