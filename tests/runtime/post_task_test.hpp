// PostTaskTest: a RuntimeTest that runs one job of a post-processing task (tandem/post.hpp) at a
// time with the application's input images and reads its output back, for the tests of the
// post tasks through the public API.
#pragma once

#include <algorithm>
#include <span>
#include <vector>

#include "app_image.hpp"
#include "post/reference.hpp"
#include "runtime_fixture.hpp"

namespace tandem::test {

class PostTaskTest : public RuntimeTest {
protected:
    // Submits one job of `task` with `inputs` (each written with its bytes first) and `settings`,
    // waits for its output and returns it read back. Serial: each job's output before the next.
    detail::Rgba8Image run_job(Runtime& runtime, TaskId task, std::vector<AppImage*> images,
                               const std::vector<std::span<const std::uint8_t>>& bytes,
                               std::span<const std::byte> settings = {}) {
        std::vector<InputImage> inputs;
        for (std::size_t i = 0; i < images.size(); ++i) {
            inputs.push_back(images[i]->write(bytes[i], m_released));
        }
        SubmitResult r;
        EXPECT_TRUE(pump_until(runtime, [&] {
            r = runtime.submit(task, settings, inputs);
            return r.status == SubmitStatus::Accepted || r.status == SubmitStatus::Failed;
        }));
        EXPECT_TRUE(r.accepted()) << r.reason;
        m_released = std::max(m_released, r.inputs_released);
        EXPECT_TRUE(pump_until(runtime, [&] {
            const auto lease = runtime.acquire(task);
            const bool done = lease && lease->generation >= r.generation;
            if (lease) {
                runtime.release(*lease, 0);
            }
            return done;
        }));
        const TaskStats s = runtime.stats(task);
        EXPECT_EQ(s.failed_jobs, 0u) << s.workload_error;
        auto lease = runtime.acquire(task);
        EXPECT_TRUE(lease);
        if (!lease) {
            return {};
        }
        auto reader = make_reader(runtime, lease->extent.width, lease->extent.height);
        std::uint64_t v = 0;
        detail::Rgba8Image out(lease->extent.width, lease->extent.height);
        out.pixels = read_back(*reader, *lease, v);
        runtime.release(*lease, v);
        return out;
    }
    void finish(std::vector<AppImage*> images) {
        for (AppImage* image : images) {
            image->finish(m_released);
        }
    }

    std::uint64_t m_released = 0;
};

} // namespace tandem::test
