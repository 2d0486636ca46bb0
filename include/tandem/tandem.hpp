// Tandem's public API in one include, every header of include/tandem/: Runtime, tasks, their
// ids and inputs, leases and their readback, the scheduler, workloads (compute, capture and
// post-processing), scene data, device information, the embedding contract, trace export,
// errors, logging, the version and the export macro.
#pragma once

#include "tandem/capture.hpp"
#include "tandem/compute.hpp"
#include "tandem/device_info.hpp"
#include "tandem/embedding.hpp"
#include "tandem/error.hpp"
#include "tandem/export.hpp"
#include "tandem/gltf.hpp"
#include "tandem/input.hpp"
#include "tandem/lease.hpp"
#include "tandem/log.hpp"
#include "tandem/pattern.hpp"
#include "tandem/placement.hpp"
#include "tandem/post.hpp"
#include "tandem/readback.hpp"
#include "tandem/runtime.hpp"
#include "tandem/scene.hpp"
#include "tandem/scheduler.hpp"
#include "tandem/task.hpp"
#include "tandem/task_id.hpp"
#include "tandem/trace.hpp"
#include "tandem/version.hpp"
#include "tandem/workload.hpp"
