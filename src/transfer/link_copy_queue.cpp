#include "transfer/link_copy_queue.hpp"

namespace tandem::detail {

QueueRole copy_queue_role(const Device& /*device*/) noexcept {
    return QueueRole::Transfer;
}

} // namespace tandem::detail
