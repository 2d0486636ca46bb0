// The scheduler inside the Runtime: where a task registered with placement "auto" runs, decided
// from a cost model (an optional calibration profile, refined by what the runtime measures) by
// one rule: a task moves to a worker only when the primary time it frees is larger than what
// moving costs (preparation + transfer + synchronisation + reintegration) by a margin, and a
// task stays where it runs unless another device is better by that margin (hysteresis).
//
// Decisions are taken inside Runtime::pump() (at most every decision_interval, and at once when
// a task's worker is lost). A move registers the task on its new device on a Tandem thread and
// switches the task's submits there only once that registration is prepared; acquire() keeps
// handing out the output shown before until the new device publishes a newer generation, so a
// moving task never goes blank and never goes back in time. The TaskId stays the same. An auto
// task whose worker was lost answers Preparing (not Failed) until it runs on its new device.
//
// Costs the model cannot predict are measured by the runtime itself: with background
// calibration on, a device with no estimate for a task gets a few trial jobs of the task's own
// latest snapshot (never shown), or the application calls Runtime::calibrate() at set-up.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tandem/task.hpp"

namespace tandem {

struct SchedulerOptions {
    // A calibration profile (`tandem calibrate` writes one) whose numbers start the cost model;
    // empty: none, the runtime measures every cost itself. A profile of other adapters or
    // drivers is refused when the Runtime is made (tandem::Error says what differs).
    std::string profile;
    // When the profile file is missing or describes other adapters: measure instead of refusing
    // (PlacementReport::model says why).
    bool profile_optional = false;
    double capacity = 0.9;         // a worker may be busy this fraction of each second
    double margin_ms = 0.05;       // hysteresis margin per update: the larger of this...
    double margin_fraction = 0.10; // ...and this fraction of the task's primary cost
    // How often the application's frames run: per-update costs are amortised over them in the
    // explanation's predicted primary frame time.
    double primary_frame_rate_hz = 60.0;
    // At most one decision per interval (a lost worker is acted on at once).
    std::chrono::milliseconds decision_interval{100};
    // Trial jobs on devices whose cost for a task is unknown (one in flight per device, at most
    // trial_jobs per device and task). Off: only the profile and the device the task runs on.
    bool background_calibration = true;
    std::uint32_t trial_jobs = 8;
    // Treat openings of one physical device (adapters with equal device UUIDs, as
    // TANDEM_VIRTUAL_DEVICES makes) as separate devices: for tests and demos that need moves
    // between them. Off, they share one capacity and no task moves between them for a gain;
    // on, the explanations say that they are treated as separate.
    bool openings_are_separate = false;
};

// What the scheduler knows of one task on one device (Runtime::calibrate's answer, and part of
// a PlacementReport).
struct DeviceCost {
    std::uint32_t device = 0; // adapter index
    bool primary = false;
    std::optional<double> execute_ms; // one update's GPU work there
    std::optional<double> move_ms;    // workers: getting one result onto the primary
    std::string source;               // "measured", "profile" or "" (unknown)
};

struct TaskPlacement {
    TaskId task;
    std::string name;
    std::uint32_t device = 0; // where the last decision put it
    bool automatic = false;   // placement "auto"
    bool moved = false;       // the last decision moved it
    std::string reason;       // one or two sentences
};

// The last decision, with the numbers behind it.
struct PlacementReport {
    std::uint64_t decision = 0; // counts decisions, from 1; 0: none yet
    std::vector<TaskPlacement> tasks;
    std::string text; // a table of devices and the reason per task, for people
    std::string json; // the same as a JSON document, for scripts
    // Where the costs come from: "profile <path> refined by measured timings", or "measured
    // timings only" and why.
    std::string model;
    std::uint64_t moves = 0; // tasks the last decision moved
    // Registrations that failed on a move (that device is not chosen again for the task).
    std::vector<std::string> failures;
};

} // namespace tandem
