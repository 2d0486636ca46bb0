// The cost model: what a task costs on each device and what moving its result costs, in
// milliseconds per update. Predictions start from the calibration profile (interpolated between
// the calibrated sizes) and are refined by the timings the runtime measures while running; each
// measured series is summarised by a robust moving estimate (the median of a window), so a
// single stall never moves a prediction.
// Owns a copy of the profile and the measurement windows. Not thread-safe: one thread (the one
// that runs the pump and asks for placements) calls observe() and the queries; it lives as long
// as the runtime that feeds it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "sched/profile.hpp"
#include "tandem/device_info.hpp"

namespace tandem::detail {

// What one update of a task is: a workload kind and its size. `work` is the kind's second
// dimension (triangles for "capture", 0 for "pattern"); `output_bytes` is what moves to the
// primary per update (0: width x height x 4, an RGBA8 image). `content`, when set, is the task's
// content key (WorkloadSample::content): a profile that calibrated that very task predicts it.
struct WorkloadShape {
    std::string kind;
    std::uint32_t width = 0;
    std::uint32_t height = 0;
    std::uint64_t work = 0;
    std::uint64_t output_bytes = 0;
    std::string content;
    [[nodiscard]] std::uint64_t bytes() const noexcept;
    [[nodiscard]] std::uint64_t pixels() const noexcept;
};

// GPU time of one update of `shape` on the device `device`, from its reference samples (those
// without content) of the same kind: piecewise linear in pixels within each calibrated work
// level, then piecewise linear in work between levels; beyond the calibrated range the nearest
// segment's slope extends it (never below proportional scaling of the nearest point). nullopt
// when the device has no reference sample of that kind.
[[nodiscard]] std::optional<double> predict_workload_ms(const DeviceProfile& device,
                                                        const WorkloadShape& shape);
// The device's sample of this very task: same kind, size and non-empty content; nullopt when
// calibration did not measure it.
[[nodiscard]] std::optional<double> calibrated_task_ms(const DeviceProfile& device,
                                                       const WorkloadShape& shape);

// The stages of one job that the runtime can time, and the cost model predicts. Delivery is
// transfer + sync + reintegrate together (worker done -> ready on the primary), for a runtime
// that cannot time them apart: it stays one figure, never split into parts it was not timed as.
enum class Stage { Execute, Prepare, Transfer, Sync, Reintegrate, Delivery };
[[nodiscard]] const char* to_string(Stage stage) noexcept;

// Median of the last `window` samples. Until `min_samples` have arrived it has no estimate. One
// outlier can move the median by at most one neighbouring order statistic, so a single stall
// (or a handful fewer than half the window) never changes it past the spread of normal samples;
// a lasting change moves it once it fills half the window.
class RobustEstimate {
public:
    static constexpr std::size_t k_window = 9;
    static constexpr std::size_t k_min_samples = 3;

    void add(double ms) noexcept;
    [[nodiscard]] std::optional<double> estimate() const noexcept;
    [[nodiscard]] std::size_t count() const noexcept { return m_count; }
    [[nodiscard]] double last() const noexcept;

private:
    std::array<double, k_window> m_samples{};
    std::size_t m_next = 0;
    std::size_t m_count = 0; // samples ever added
};

// Where a number came from, for explanations: the calibration profile (Prediction says whether
// it measured this very task) or the runtime's own timings.
enum class CostSource { Profile, Measured };
[[nodiscard]] const char* to_string(CostSource source) noexcept;

struct Prediction {
    double ms = 0.0;
    CostSource source = CostSource::Profile;
    // Profile predictions of a task's execution: whether the profile measured this very task
    // (else the reference workloads predicted it), and what the reference workloads predict,
    // for explanations and for judging the reference model.
    bool task_calibrated = false;
    std::optional<double> reference_ms;
};

// The three parts of getting a result onto the primary, each timed apart (by calibration, or by
// a runtime that times them apart), each with its source.
struct DeliveryParts {
    Prediction transfer;    // worker image -> primary memory over MoveCost::path
    Prediction sync;        // worker completion -> primary may start (GPU-side or host bridge)
    Prediction reintegrate; // primary-side copy into the image the application samples
    [[nodiscard]] double total_ms() const noexcept {
        return transfer.ms + sync.ms + reintegrate.ms;
    }
};

// What moving one update's result from `worker` to the primary costs. After the worker's
// preparation, the result's way to the primary is known either in parts (`parts`) or only as a
// whole (`delivery`: worker done -> ready on the primary, as the runtime measures it), exactly
// one of the two: a whole is reported as the one figure it was measured as.
struct MoveCost {
    // Recording and submitting on the worker; unknown where neither the profile nor the runtime
    // timed it (then not counted).
    std::optional<Prediction> prepare;
    std::optional<DeliveryParts> parts;
    std::optional<Prediction> delivery;
    // The path the result takes; unknown for a delivery measured without one being named.
    std::optional<TransferPath> path;
    bool gpu_side_sync = false; // with parts: the sync is GPU-side (else the host bridge)
    [[nodiscard]] double total_ms() const noexcept;
    // How long one result occupies the transfer path: the transfer part, else the whole
    // delivery (an upper bound: it also holds the sync and the primary's copy).
    [[nodiscard]] double path_ms() const noexcept;
    // The primary's own share of one delivery: the reintegrate part; 0 for a delivery known only
    // as a whole, whose share was not measured.
    [[nodiscard]] double primary_ms() const noexcept;
};

class CostModel {
public:
    // Binds `profile` to the adapters present; throws Error (see bind_profile) when it does not
    // describe them.
    CostModel(Profile profile, const std::vector<DeviceInfo>& devices);

    // One update of task `task` with `shape` on adapter `device`: the measured estimate when
    // enough timings of it have arrived, else the profile's sample of this very task (shape
    // content), else the reference workloads' prediction; nullopt when none knows (the device
    // was not calibrated for that kind).
    [[nodiscard]] std::optional<Prediction>
    execute(const std::string& task, const WorkloadShape& shape, std::uint32_t device) const;

    // Moving one update's result from adapter `worker` to adapter `primary`. The transfer path
    // is `forced` when given, else the measured path with the lowest predicted time for the
    // shape's bytes. In parts (the profile's, each replaced by the runtime's timing where it
    // timed that part apart) unless the runtime measured the delivery as a whole and no part
    // apart: then the measured delivery, one figure. Without the pair in the profile a measured
    // delivery alone prices the move (over `forced`, the path the runtime uses, when given).
    // nullopt when neither knows the pair (or the profile lacks the forced path).
    [[nodiscard]] std::optional<MoveCost> move(const std::string& task, const WorkloadShape& shape,
                                               std::uint32_t worker, std::uint32_t primary,
                                               std::optional<TransferPath> forced = {}) const;

    // A timing the runtime measured for one job of `task` that ran on adapter `device` (for
    // Transfer, Sync and Reintegrate: the worker whose result moved). Returns false, and keeps
    // nothing, when `ms` is not a finite non-negative number.
    [[nodiscard]] bool observe(const std::string& task, std::uint32_t device, Stage stage,
                               double ms);
    // Drops every timing of `task` (it was removed or changed shape).
    void forget(const std::string& task);

    [[nodiscard]] const Profile& profile() const noexcept { return m_profile; }
    // The profile device adapter `device` is bound to; nullptr for an adapter not present at
    // construction.
    [[nodiscard]] const DeviceProfile* device_profile(std::uint32_t device) const noexcept;

private:
    using Key = std::tuple<std::string, std::uint32_t, Stage>;
    [[nodiscard]] std::optional<double> measured(const std::string& task, std::uint32_t device,
                                                 Stage stage) const;
    [[nodiscard]] std::optional<MoveCost> measured_move(const std::string& task,
                                                        std::uint32_t worker,
                                                        std::optional<TransferPath> path) const;
    [[nodiscard]] Prediction refine(const std::string& task, std::uint32_t device, Stage stage,
                                    double profile_ms) const;
    // The worker's preparation: measured, else the profile's where calibration timed it.
    [[nodiscard]] std::optional<Prediction> prepare(const std::string& task,
                                                    std::uint32_t worker) const;

    Profile m_profile;
    std::vector<std::uint32_t> m_binding; // adapter index -> profile device index
    std::vector<bool> m_present;
    std::map<Key, RobustEstimate> m_measured;
};

} // namespace tandem::detail
