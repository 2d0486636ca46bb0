// A client that breaks the layout rule, for the check's own test (never compiled).
#include "core/instance.hpp"
#include "harness/run_scene.hpp"
#include "harness/run_scene_state.hpp"
#include "local.hpp"
#include "tandem/runtime.hpp"
#include <core/vk_check.hpp>
