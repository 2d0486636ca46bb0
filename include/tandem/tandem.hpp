// Tandem's public API in one include: Runtime, tasks, leases, device information and errors.
#pragma once

#include "tandem/compute.hpp"
#include "tandem/device_info.hpp"
#include "tandem/error.hpp"
#include "tandem/lease.hpp"
#include "tandem/pattern.hpp"
#include "tandem/runtime.hpp"
#include "tandem/scheduler.hpp"
#include "tandem/task.hpp"
#include "tandem/workload.hpp"
