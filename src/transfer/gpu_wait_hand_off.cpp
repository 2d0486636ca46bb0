#include "transfer/gpu_wait_hand_off.hpp"

namespace tandem::detail {

GpuWaitHandOff::GpuWaitHandOff(const HandOffContext& context)
    : HandOff(context), m_imported_worker(TimelineSemaphore::import_from(
                            *context.primary, *context.worker_timeline,
                            context.worker_timeline->name() + " (imported)")) {}

VkResult GpuWaitHandOff::hand(const HandedTransfer& transfer) noexcept {
    return submit_waiting_bands(transfer, m_imported_worker, transfer.first_worker_value);
}

} // namespace tandem::detail
