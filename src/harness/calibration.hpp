// calibrate(): the measurements behind `tandem calibrate`. On every selected adapter of a
// DeviceSession (its primary first, then its workers) it measures the reference workloads, the
// capture tasks of a RunScene (when given), job preparation and reintegration, and for each
// ordered pair of them every transfer path and the synchronisation; the result is the
// calibration profile the scheduler reads (schema: docs/profile-json.md).
// Threads: runs on the calling thread; the callbacks are called there.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/device_session.hpp"
#include "harness/run_scene.hpp"

namespace tandem::harness {

struct CalibrationRequest {
    bool quick = false;                       // fewer repetitions and transfer sizes (CI)
    std::chrono::milliseconds timeout{10000}; // one measurement's wait limit
    const RunScene* scene = nullptr;          // its capture tasks too; null: none
    std::string tandem_version;               // written into the profile
    // Called once the devices are open, before the first measurement.
    std::function<void(std::size_t adapters, std::size_t tasks)> on_start;
    // Called before each measurement (1-based step of total, and what it measures).
    std::function<void(std::size_t step, std::size_t total, const std::string& what)> on_progress;
};

// A measured profile. Plain value.
class CalibrationProfile {
public:
    struct State;
    explicit CalibrationProfile(std::unique_ptr<State> state);
    ~CalibrationProfile();
    CalibrationProfile(CalibrationProfile&&) noexcept;
    CalibrationProfile& operator=(CalibrationProfile&&) noexcept;

    // Writes it atomically (creating the folder); throws tandem::Error on failure.
    void save(const std::filesystem::path& path) const;
    [[nodiscard]] nlohmann::json json() const;
    // The text `tandem calibrate` prints: every device's and pair's numbers.
    [[nodiscard]] std::string summary() const;

private:
    std::unique_ptr<State> m_state;
};

// Throws tandem::Error (a device that cannot be opened, a measurement that fails everywhere).
[[nodiscard]] CalibrationProfile calibrate(const DeviceSession& session,
                                           const CalibrationRequest& request);

} // namespace tandem::harness
