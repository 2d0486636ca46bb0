// Measurer: the real measurements behind `tandem calibrate`. It opens one Device per adapter to
// calibrate and fills CalibrationHooks (sched/calibration.hpp) with timings taken on them:
//  - workloads: the pattern compute task and scene captures of a generated sphere with about the
//    reference triangle count, and the application's own capture tasks (add_task_content), each
//    update timed with GPU timestamps on the main queue (a capture by its own timestamps, as in
//    a run; CPU wall time of submit + fence wait where the queue has no timestamps; timing()
//    says which);
//  - preparation: CPU time to reset, record and submit one pattern job;
//  - reintegration: as a primary, a host buffer copied into a sampled image, per reference size;
//  - transfer: a TransferLink per (pair, path, size) with the path forced, timed from submit until
//    the primary timeline shows the result;
//  - synchronisation: an empty worker batch followed by the primary's (GPU-side wait on a shared
//    timeline where the pair allows it, else the host observing the worker and submitting), less
//    the worker's own round trip.
// Threads: one thread (the calibration's) uses a Measurer. Lifetime: the Instance outlives it;
// construction throws tandem::Error when a device cannot be opened.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "core/discovery.hpp"
#include "core/instance.hpp"
#include "scene/scene.hpp"
#include "sched/calibration.hpp"

namespace tandem::detail {

struct MeasureOptions {
    // Fewer repetitions and transfer sizes (64 KiB and 1 MiB only): for tests and CI.
    bool quick = false;
    std::chrono::milliseconds timeout{10000}; // one measurement's wait limit
};

class Measurer {
public:
    // Opens every adapter of `adapters` whose index is in `indices`.
    Measurer(const Instance& instance, const std::vector<Adapter>& adapters,
             const std::vector<std::uint32_t>& indices, MeasureOptions options = {});
    ~Measurer();
    Measurer(const Measurer&) = delete;
    Measurer& operator=(const Measurer&) = delete;

    // Hooks that measure on the opened devices (progress left empty). The Measurer must outlive
    // every call through them.
    [[nodiscard]] CalibrationHooks hooks();

    // What a capture workload whose content is `key` draws: the scene's assets and the task's
    // encoded snapshot (scene/snapshot_codec.hpp). A capture with unknown content is not
    // measured (the hook returns no timings).
    void add_task_content(const std::string& key, std::shared_ptr<const SceneAssets> assets,
                          std::vector<std::byte> snapshot);

    // "gpu-timestamps" or "cpu-wall" for an opened adapter.
    [[nodiscard]] std::string timing(std::uint32_t adapter) const;
    // The transfer sizes measured (reference_transfer_sizes(), fewer when quick).
    [[nodiscard]] std::vector<std::uint64_t> transfer_sizes() const;

    struct Dev;

private:
    [[nodiscard]] Dev& dev(std::uint32_t adapter) const;
    [[nodiscard]] std::vector<double> workload(const DeviceInfo& device,
                                               const ReferenceWorkload& w);
    [[nodiscard]] std::vector<double> prepare(const DeviceInfo& device);
    [[nodiscard]] std::vector<TransferSample> reintegrate(const DeviceInfo& device);
    [[nodiscard]] std::vector<TransferSample> transfer(const PairInfo& pair, TransferPath path);
    [[nodiscard]] std::vector<double> sync(const PairInfo& pair);
    [[nodiscard]] std::uint32_t repetitions() const noexcept;

    struct TaskContent {
        std::shared_ptr<const SceneAssets> assets;
        std::vector<std::byte> snapshot;
    };

    MeasureOptions m_options;
    std::map<std::uint32_t, std::unique_ptr<Dev>> m_devices;
    std::map<std::string, TaskContent> m_tasks;
};

} // namespace tandem::detail
