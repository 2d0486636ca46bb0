// tandem-compute: an engine's own compute pass on another GPU. Tandem opens the devices itself
// (the primary, and every other adapter as a worker); the engine hands it the SPIR-V of its
// procedural texture (ripples.comp) as a compute task placed "auto" (measured on every device by
// Runtime::calibrate, then placed by the runtime's scheduler), submits each frame's push
// constants and palette as plain bytes, and reads every new output on the primary
// (tandem::LeaseReadback), checking each texel against the same maths on the CPU.
//
// Exit code 0 when at least 8 distinct generations were read and every texel matched.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <tandem/tandem.hpp>

namespace {

constexpr std::uint32_t k_width = 200;
constexpr std::uint32_t k_height = 120;

// One job's bytes: push constants (frame, centre x, centre y), then the palette (8 colours).
struct Job {
    std::uint32_t push[3];
    std::uint32_t palette[8];
};

Job job_for(std::uint32_t frame) {
    Job j{};
    j.push[0] = frame;
    j.push[1] = (frame * 7) % k_width;
    j.push[2] = (frame * 3) % k_height;
    for (std::uint32_t i = 0; i < 8; ++i) {
        j.palette[i] = 0xff000000u | ((i * 32 + frame) & 0xff) << 16 | (255 - i * 30) << 8 |
                       ((frame * 13 + i * 50) & 0xff);
    }
    return j;
}

// ripples.comp on the CPU.
std::uint32_t reference(const Job& j, std::uint32_t x, std::uint32_t y) {
    const std::uint32_t dx = x > j.push[1] ? x - j.push[1] : j.push[1] - x;
    const std::uint32_t dy = y > j.push[2] ? y - j.push[2] : j.push[2] - y;
    const std::uint32_t ring = (dx * dx + dy * dy + j.push[0] * 97u) / 64u;
    return j.palette[ring % 8u];
}

std::vector<std::uint32_t> load_spirv(const char* path) {
    std::ifstream f(path, std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(f)),
                                  std::istreambuf_iterator<char>());
    if (bytes.empty() || bytes.size() % 4 != 0) {
        throw std::runtime_error(std::string("cannot read SPIR-V from ") + path);
    }
    std::vector<std::uint32_t> words(bytes.size() / 4);
    std::memcpy(words.data(), bytes.data(), bytes.size());
    return words;
}

} // namespace

int main() try {
    tandem::ComputeTaskDesc compute;
    compute.spirv = load_spirv(RIPPLES_SPV);
    compute.workgroup_size = {16, 8, 1};
    compute.push_constant_bytes = sizeof Job::push;
    compute.input_bytes = {sizeof Job::palette};

    tandem::Runtime runtime; // the primary and every other adapter as a worker
    tandem::TaskDesc desc;
    desc.name = "ripples";
    desc.width = k_width;
    desc.height = k_height;
    desc.placement = tandem::Placement::automatic();
    desc.factory = tandem::compute_workload(compute); // checks the module: throws Error
    const tandem::TaskId task = runtime.register_task(desc);
    // No calibration profile: the runtime measures the pass on every device first (set-up
    // code; without this call, trial jobs in the background measure it while frames run), and
    // its scheduler places the task in the next pump.
    const Job first = job_for(0);
    const tandem::CalibrationResult calibrated = runtime.calibrate(
        task, std::span(reinterpret_cast<const std::byte*>(&first), sizeof first), 6);
    if (calibrated.error != tandem::TaskError::None) {
        std::fprintf(stderr, "tandem-compute: %s\n", calibrated.reason.c_str());
        return 1;
    }
    for (const tandem::DeviceCost& c : calibrated.costs) {
        std::printf("tandem-compute: adapter %u: %.3f ms per update%s\n", c.device,
                    c.execute_ms.value_or(-1.0),
                    c.move_ms ? (", " + std::to_string(*c.move_ms) + " ms to move").c_str()
                              : " (primary)");
    }
    runtime.pump();
    const tandem::TaskStats placed = runtime.stats(task);
    std::printf("tandem-compute: ripples on %s (adapter %u) via %s: %s\n",
                placed.device_name.c_str(), placed.device,
                tandem::transfer_path_name(placed).c_str(),
                runtime.placement().tasks.at(0).reason.c_str());

    int status = 1;
    {
        tandem::LeaseReadback readback(runtime);
        std::map<std::uint64_t, Job> jobs; // generation -> what was submitted for it
        std::uint64_t last_read = 0;
        std::uint32_t generations = 0;
        std::uint32_t mismatches = 0;
        std::uint32_t frame = 0;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (generations < 8 && std::chrono::steady_clock::now() < deadline) {
            ++frame;
            const Job job = job_for(frame);
            const tandem::SubmitResult r = runtime.submit(
                task, std::span(reinterpret_cast<const std::byte*>(&job), sizeof job));
            if (r.accepted()) {
                jobs[r.generation] = job;
            } else if (r.status == tandem::SubmitStatus::Failed) {
                throw std::runtime_error("submit failed: " + r.reason);
            }
            runtime.pump();
            const auto lease = runtime.acquire(task);
            if (!lease || lease->generation == last_read) {
                if (lease) {
                    runtime.release(*lease, 0);
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
                continue;
            }
            // read() waits for its copy: nothing of it is pending when the lease goes back.
            const tandem::ReadbackImage image = readback.read(*lease);
            runtime.release(*lease, 0);
            const Job& sent = jobs.at(lease->generation);
            for (std::uint32_t y = 0; y < k_height; ++y) {
                for (std::uint32_t x = 0; x < k_width; ++x) {
                    if (image.texel(x, y) != reference(sent, x, y) && mismatches++ < 3) {
                        std::fprintf(stderr,
                                     "generation %llu texel (%u, %u): %08x, expected %08x\n",
                                     static_cast<unsigned long long>(lease->generation), x, y,
                                     image.texel(x, y), reference(sent, x, y));
                    }
                }
            }
            last_read = lease->generation;
            ++generations;
        }
        std::printf("tandem-compute: read %u generations of %ux%u, %u texels differ\n", generations,
                    k_width, k_height, mismatches);
        status = generations >= 8 && mismatches == 0 ? 0 : 1;
    } // the readback's objects go before the runtime's device
    return status;
} catch (const std::exception& e) {
    std::fprintf(stderr, "tandem-compute: %s\n", e.what());
    return 1;
}
