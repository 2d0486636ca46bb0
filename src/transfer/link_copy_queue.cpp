#include "transfer/link_copy_queue.hpp"

#include "core/copy_queue.hpp"

namespace tandem::detail {

QueueRole copy_queue_role(const Device& device) noexcept {
    return device.copy_queue_choice().role;
}

} // namespace tandem::detail
