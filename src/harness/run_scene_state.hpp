// What a RunScene holds, for the harness's own users of the scene (capture tasks, main view,
// calibration). Harness-internal: only the harness's .cpp files include this header (it speaks
// in tandem::detail types).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "harness/run_scene.hpp"
#include "scene/run_inputs.hpp"

namespace tandem::harness {

struct RunScene::State {
    detail::RunInputs inputs;
    std::vector<RunTaskInfo> tasks; // one per inputs.prepared
    std::string main_camera;
    std::shared_ptr<const Scene> capture_scene; // inputs.scene's assets
};

} // namespace tandem::harness
