// tandem-meshes: an engine's own meshes drawn on another GPU. The engine makes its geometry in
// code (a ground grid with 16-bit indices and a checker image, a crate of two primitives with
// 32-bit indices and computed normals, a pyramid without indices), freezes it into a
// tandem::Scene, and registers two capture tasks of it: one on a worker, one on the primary.
// Each frame it submits the same CaptureSnapshot (an orbiting camera, the crates turning) to
// both, reads both outputs on the primary (tandem::LeaseReadback) and compares them channel by
// channel: the worker's render must be the primary's. The worker is one of the primary's kind
// (vendor, device and driver) when there is one, and then every channel of every pixel must be
// equal; on a worker of another kind each channel may differ by at most k_cross_kind_tolerance
// (rounding, see below). It prints the largest difference it found.
//
//     tandem-meshes [--require-worker]
// Without a worker (one GPU; TANDEM_VIRTUAL_DEVICES=2 opens it twice) both tasks run on the
// primary, unless --require-worker makes that an error. Exit code 0 when 6 frames were compared,
// no channel differed by more than allowed and something was drawn.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <tandem/tandem.hpp>

namespace {

constexpr std::uint32_t k_width = 160;
constexpr std::uint32_t k_height = 100;
constexpr int k_frames = 6;
// The largest difference of one 8-bit channel accepted between a worker and a primary of
// different kinds (a CPU device against a GPU, or two vendors). Both rasterise by Vulkan's rules,
// so the same pixels are covered; they round the interpolated normals, texture coordinates and
// the lighting in their own floating-point order before the conversion to 8 bits, which moves a
// channel by a unit or two (2 measured between an H200 and lavapipe, on about 30% of the pixels).
// A wrong or missing mesh, instance, transform or texture changes channels by tens or more.
constexpr std::uint32_t k_cross_kind_tolerance = 4;

// The largest difference between one 8-bit channel of `a` and the same channel of `b`.
std::uint32_t channel_difference(std::uint32_t a, std::uint32_t b) {
    std::uint32_t largest = 0;
    for (int shift = 0; shift < 32; shift += 8) {
        const auto x = static_cast<int>((a >> shift) & 0xffu);
        const auto y = static_cast<int>((b >> shift) & 0xffu);
        largest = std::max(largest, static_cast<std::uint32_t>(std::abs(x - y)));
    }
    return largest;
}

// The engine's geometry, as its own arrays.
struct Geometry {
    std::vector<float> positions, normals, uvs;
    std::vector<std::uint16_t> indices16;
    std::vector<std::uint32_t> indices32;
};

// An n x n grid of quads in the XZ plane, `size` wide, facing +Y.
Geometry grid(std::uint16_t n, float size) {
    Geometry g;
    for (std::uint16_t z = 0; z <= n; ++z) {
        for (std::uint16_t x = 0; x <= n; ++x) {
            const float u = static_cast<float>(x) / static_cast<float>(n);
            const float v = static_cast<float>(z) / static_cast<float>(n);
            g.positions.insert(g.positions.end(), {(u - 0.5f) * size, 0.0f, (v - 0.5f) * size});
            g.normals.insert(g.normals.end(), {0.0f, 1.0f, 0.0f});
            g.uvs.insert(g.uvs.end(), {u * 4.0f, v * 4.0f}); // the checker repeats 4 times
        }
    }
    auto at = [n](int x, int z) { return static_cast<std::uint16_t>(z * (n + 1) + x); };
    for (int z = 0; z < n; ++z) {
        for (int x = 0; x < n; ++x) {
            g.indices16.insert(g.indices16.end(), {at(x, z), at(x, z + 1), at(x + 1, z),
                                                   at(x + 1, z), at(x, z + 1), at(x + 1, z + 1)});
        }
    }
    return g;
}

// Faces of a unit cube: the four sides (`sides`) or the top and bottom; four vertices each, so
// that the computed normals are flat.
Geometry cube_faces(bool sides) {
    Geometry g;
    // Each face: a corner and two edges.
    const float faces[6][9] = {{-0.5f, -0.5f, 0.5f, 1, 0, 0, 0, 1, 0},   // +Z
                               {0.5f, -0.5f, -0.5f, -1, 0, 0, 0, 1, 0},  // -Z
                               {0.5f, -0.5f, 0.5f, 0, 0, -1, 0, 1, 0},   // +X
                               {-0.5f, -0.5f, -0.5f, 0, 0, 1, 0, 1, 0},  // -X
                               {-0.5f, 0.5f, 0.5f, 1, 0, 0, 0, 0, -1},   // +Y
                               {-0.5f, -0.5f, -0.5f, 1, 0, 0, 0, 0, 1}}; // -Y
    for (int f = sides ? 0 : 4; f < (sides ? 4 : 6); ++f) {
        const float* c = faces[f];
        const auto base = static_cast<std::uint32_t>(g.positions.size() / 3);
        for (int k = 0; k < 4; ++k) {
            const float a = (k == 1 || k == 2) ? 1.0f : 0.0f;
            const float b = (k >= 2) ? 1.0f : 0.0f;
            for (int axis = 0; axis < 3; ++axis) {
                g.positions.push_back(c[axis] + a * c[3 + axis] + b * c[6 + axis]);
            }
            g.uvs.insert(g.uvs.end(), {a, 1.0f - b});
        }
        g.indices32.insert(g.indices32.end(), {base, base + 1, base + 2, base, base + 2, base + 3});
    }
    return g;
}

tandem::Matrix4 turn_y(float angle, float x, float y, float z, float scale) {
    const float c = std::cos(angle) * scale;
    const float s = std::sin(angle) * scale;
    return {c, 0, -s, 0, 0, scale, 0, 0, s, 0, c, 0, x, y, z, 1};
}

// Submits `bytes` to `task` until accepted, then pumps until that generation is the task's
// newest output; returns it.
std::uint64_t produce(tandem::Runtime& runtime, tandem::TaskId task,
                      const std::vector<std::byte>& bytes) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    auto wait = [&] {
        if (std::chrono::steady_clock::now() > deadline) {
            throw std::runtime_error("no output within 30 s");
        }
        runtime.pump();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    };
    std::uint64_t generation = 0;
    while (generation == 0) {
        const tandem::SubmitResult r = runtime.submit(task, bytes);
        if (r.accepted()) {
            generation = r.generation;
        } else if (r.status == tandem::SubmitStatus::Failed) {
            throw std::runtime_error("submit failed: " + r.reason);
        } else {
            wait(); // Busy or Preparing
        }
    }
    for (;;) {
        const tandem::TaskStats stats = runtime.stats(task);
        if (!stats.workload_error.empty()) {
            throw std::runtime_error("the capture stopped: " + stats.workload_error);
        }
        if (stats.newest_generation >= generation) {
            return generation;
        }
        wait();
    }
}

} // namespace

int main(int argc, char** argv) try {
    const bool require_worker = argc > 1 && std::string(argv[1]) == "--require-worker";

    // The engine's own data: a checker image, three materials, three meshes.
    std::vector<std::uint8_t> checker(8 * 8 * 4);
    for (std::uint32_t i = 0; i < 64; ++i) {
        const bool light = ((i % 8) + (i / 8)) % 2 == 0;
        const std::uint8_t v = light ? 220 : 90;
        checker[i * 4 + 0] = v;
        checker[i * 4 + 1] = v;
        checker[i * 4 + 2] = static_cast<std::uint8_t>(light ? 200 : 110);
        checker[i * 4 + 3] = 255;
    }
    tandem::SceneBuilder builder;
    const tandem::ImageId checker_image = builder.add_image(8, 8, checker, "checker");
    const tandem::MaterialId ground_paint =
        builder.add_material({{1, 1, 1, 1}, checker_image, "ground"});
    const tandem::MaterialId wood = builder.add_material({{0.8f, 0.5f, 0.2f, 1}, {}, "wood"});
    const tandem::MaterialId lid = builder.add_material({{0.3f, 0.3f, 0.35f, 1}, {}, "lid"});
    const tandem::MaterialId stone = builder.add_material({{0.9f, 0.9f, 0.3f, 1}, {}, "stone"});

    const Geometry ground = grid(16, 12.0f);
    tandem::PrimitiveDesc ground_desc;
    ground_desc.positions = ground.positions;
    ground_desc.normals = ground.normals;
    ground_desc.uvs = ground.uvs;
    ground_desc.indices16 = ground.indices16;
    ground_desc.material = ground_paint;
    const tandem::MeshId ground_mesh = builder.add_mesh("ground", {ground_desc});

    const Geometry sides = cube_faces(true);
    const Geometry caps = cube_faces(false);
    tandem::PrimitiveDesc side_desc;
    side_desc.positions = sides.positions;
    side_desc.uvs = sides.uvs;
    side_desc.indices32 = sides.indices32; // no normals: computed, flat per face
    side_desc.material = wood;
    tandem::PrimitiveDesc cap_desc;
    cap_desc.positions = caps.positions;
    cap_desc.uvs = caps.uvs;
    cap_desc.indices32 = caps.indices32;
    cap_desc.material = lid;
    const tandem::MeshId crate = builder.add_mesh("crate", {side_desc, cap_desc});

    const std::vector<float> pyramid = {
        -0.6f, 0, 0.6f,  0.6f,  0, 0.6f,  0, 1.2f, 0, 0.6f,  0, 0.6f,  0.6f,  0, -0.6f, 0, 1.2f, 0,
        0.6f,  0, -0.6f, -0.6f, 0, -0.6f, 0, 1.2f, 0, -0.6f, 0, -0.6f, -0.6f, 0, 0.6f,  0, 1.2f, 0};
    tandem::PrimitiveDesc pyramid_desc;
    pyramid_desc.positions = pyramid; // no indices: the vertices in order
    pyramid_desc.material = stone;
    const tandem::MeshId pyramid_mesh = builder.add_mesh("pyramid", {pyramid_desc});
    const std::shared_ptr<const tandem::Scene> scene = builder.build();

    tandem::Runtime runtime; // the primary and every other adapter as a worker
    // Tandem's renderer gives the same pixels on devices of the same kind (vendor, device and
    // driver); a worker of another kind rasterises edges its own way.
    const tandem::DeviceInfo& primary = runtime.primary_device();
    const std::vector<tandem::DeviceInfo> workers = runtime.worker_devices();
    std::size_t chosen = workers.size();
    for (std::size_t i = 0; i < workers.size() && chosen == workers.size(); ++i) {
        if (workers[i].vendor_id == primary.vendor_id &&
            workers[i].device_id == primary.device_id &&
            workers[i].driver_uuid == primary.driver_uuid) {
            chosen = i;
        }
    }
    const bool same_kind = chosen < workers.size();
    if (!same_kind && !workers.empty()) {
        chosen = 0;
    }
    // Same kind (or no worker: both on the primary): every channel equal.
    const std::uint32_t allowed = same_kind || workers.empty() ? 0 : k_cross_kind_tolerance;
    if (chosen == workers.size() && require_worker) {
        throw std::runtime_error("no worker device (one GPU: set TANDEM_VIRTUAL_DEVICES=2)");
    }
    tandem::TaskDesc desc;
    desc.width = k_width;
    desc.height = k_height;
    desc.factory = tandem::capture_workload(scene);
    desc.name = "meshes on a worker";
    desc.placement = chosen < workers.size() ? tandem::Placement::on_worker(chosen)
                                             : tandem::Placement::on_primary();
    const tandem::TaskId on_worker = runtime.register_task(desc);
    desc.name = "meshes on the primary";
    desc.placement = tandem::Placement::on_primary();
    const tandem::TaskId on_primary = runtime.register_task(desc);
    std::printf("tandem-meshes: %u meshes; one task on %s (adapter %u) via %s, one on the "
                "primary\n",
                scene->mesh_count(), runtime.stats(on_worker).device_name.c_str(),
                runtime.stats(on_worker).device,
                tandem::transfer_path_name(runtime.stats(on_worker)).c_str());

    int status = 1;
    {
        tandem::LeaseReadback readback(runtime);
        std::uint32_t differing = 0; // pixels with any channel different
        std::uint32_t largest = 0;   // the largest channel difference
        std::uint32_t reported = 0;
        std::uint32_t drawn = 0;
        for (int frame = 0; frame < k_frames; ++frame) {
            const float t = static_cast<float>(frame) * 0.4f;
            tandem::CaptureSnapshot shot;
            shot.camera.fov_y = 0.9f;
            shot.camera.view = tandem::look_at({7.0f * std::cos(t), 3.5f, 7.0f * std::sin(t)},
                                               {0, 0.5f, 0}, {0, 1, 0});
            shot.instances.push_back({ground_mesh, tandem::k_identity, {}});
            for (int i = 0; i < 3; ++i) {
                const float x = -2.5f + 2.5f * static_cast<float>(i);
                shot.instances.push_back({crate, turn_y(t * (i + 1), x, 0.5f, -1.0f, 1.0f), {}});
            }
            shot.instances.push_back({pyramid_mesh, turn_y(-t, 0, 0, 2.0f, 1.5f), {}});
            if (const std::string why = tandem::check_capture(shot, *scene); !why.empty()) {
                throw std::runtime_error(why);
            }
            const std::vector<std::byte> bytes = tandem::encode_capture(shot);

            tandem::ReadbackImage images[2];
            const tandem::TaskId tasks[2] = {on_worker, on_primary};
            for (int k = 0; k < 2; ++k) {
                const std::uint64_t generation = produce(runtime, tasks[k], bytes);
                const auto lease = runtime.acquire(tasks[k]);
                if (!lease || lease->generation != generation) {
                    throw std::runtime_error("the newest output is not the one just produced");
                }
                images[k] = readback.read(*lease); // waits for its copy: release with 0
                runtime.release(*lease, 0);
            }
            for (std::uint32_t y = 0; y < k_height; ++y) {
                for (std::uint32_t x = 0; x < k_width; ++x) {
                    const std::uint32_t worker = images[0].texel(x, y);
                    const std::uint32_t primary = images[1].texel(x, y);
                    const std::uint32_t difference = channel_difference(worker, primary);
                    differing += difference > 0 ? 1 : 0;
                    largest = std::max(largest, difference);
                    if (difference > allowed && reported++ < 3) {
                        std::fprintf(stderr,
                                     "frame %d pixel (%u, %u): worker %08x, primary %08x, a "
                                     "channel differs by %u\n",
                                     frame, x, y, worker, primary, difference);
                    }
                    drawn += worker != images[0].texel(0, 0);
                }
            }
        }
        std::printf("tandem-meshes: compared %d frames of %ux%u: largest channel difference %u "
                    "(allowed %u%s), %u pixels differ, %u drawn\n",
                    k_frames, k_width, k_height, largest, allowed,
                    allowed > 0 ? ": the worker is not the primary's kind of device" : "",
                    differing, drawn);
        status = largest <= allowed && drawn > 0 ? 0 : 1;
    } // the readback's objects go before the runtime's device
    return status;
} catch (const std::exception& e) {
    std::fprintf(stderr, "tandem-meshes: %s\n", e.what());
    return 1;
}
