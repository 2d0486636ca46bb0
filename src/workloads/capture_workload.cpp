// tandem::capture_workload (tandem/capture.hpp): the application's Scene drawn by the renderer
// that `tandem run` uses. Per device, SceneCapture over shared_mesh_cache (the scene uploaded
// once per device, shared by every capture task of the same Scene there); per job, the
// submitted bytes decoded (scene/capture_codec.hpp), checked against the scene and drawn for the
// task's aspect. submit() refuses bytes that cannot be drawn with check()'s sentence (decoding
// is all it needs: no GPU); record() checks again and throws the same sentence, failing the job.
#include "tandem/capture.hpp"

#include <optional>
#include <span>
#include <string>
#include <utility>

#include "render/scene_capture.hpp"
#include "scene/capture_codec.hpp"
#include "scene/scene_access.hpp"
#include "tandem/error.hpp"
#include "workloads/application_workload.hpp"

namespace tandem {
namespace {

class CaptureWorkload final : public Workload {
public:
    CaptureWorkload(const detail::Device& device, const WorkerContext& context,
                    const std::shared_ptr<const detail::SceneAssets>& assets)
        : m_capture(detail::shared_mesh_cache(device, assets), context.format,
                    {context.width, context.height}, context.slots),
          m_mesh_count(assets->meshes.size()),
          m_aspect(static_cast<float>(context.width) / static_cast<float>(context.height)),
          m_task(context.task_name) {}

    [[nodiscard]] VkImageUsageFlags target_usage() const override {
        return detail::SceneCapture::k_target_usage;
    }
    [[nodiscard]] WorkloadOutput output() const override {
        return {detail::SceneCapture::k_output_layout, detail::SceneCapture::k_output_stage,
                detail::SceneCapture::k_output_access};
    }

    [[nodiscard]] std::string check(std::span<const std::byte> bytes) const override {
        std::string why;
        (void)decode(bytes, why);
        return why;
    }

    void record(const RecordContext& job) override {
        std::string why;
        const std::optional<detail::CaptureFrame> frame = decode(job.bytes, why);
        if (!frame) {
            throw Error(ErrorCategory::InvalidArgument, why,
                        "Submit the bytes tandem::encode_capture returns for this scene");
        }
        const VkResult r = m_capture.record(job.cmd, job.slot, job.image, job.view,
                                            detail::frame_snapshot(*frame, m_aspect));
        if (r != VK_SUCCESS) {
            throw Error(r, "Capture task '" + m_task + "' could not record its snapshot (" +
                               detail::to_string(m_capture.last_status()) + ")");
        }
    }

private:
    // The snapshot in `bytes` when it can be drawn from the scene; else nothing, and `why` says
    // why in a sentence.
    [[nodiscard]] std::optional<detail::CaptureFrame> decode(std::span<const std::byte> bytes,
                                                             std::string& why) const {
        detail::SnapshotRefusal refusal;
        std::optional<detail::CaptureFrame> frame = detail::decode_capture_frame(bytes, &refusal);
        if (!frame) {
            why = "Capture task '" + m_task + "' was submitted " + std::to_string(bytes.size()) +
                  " bytes that are not a snapshot (" + refusal.reason + ", at byte " +
                  std::to_string(refusal.byte) + ")";
            return std::nullopt;
        }
        if (std::string problem =
                detail::check_capture_frame(*frame, m_mesh_count, frame->instances.size());
            !problem.empty()) {
            why = "Capture task '" + m_task + "' cannot draw its snapshot: " + problem;
            return std::nullopt;
        }
        return frame;
    }

    detail::SceneCapture m_capture;
    std::size_t m_mesh_count;
    float m_aspect;
    std::string m_task;
};

} // namespace

WorkloadFactory capture_workload(std::shared_ptr<const Scene> scene) {
    if (!scene) {
        throw Error(ErrorCategory::InvalidArgument, "tandem::capture_workload was given no scene",
                    "Pass the scene SceneBuilder::build() returned");
    }
    return [scene = std::move(scene)](const WorkerContext& context) -> std::unique_ptr<Workload> {
        const detail::Device* device = detail::application_device(context.device);
        if (device == nullptr) {
            throw Error(ErrorCategory::InvalidArgument,
                        "tandem::capture_workload's factory was called outside a Tandem runtime",
                        "Give it to TaskDesc::factory; the runtime calls it on each device");
        }
        return std::make_unique<CaptureWorkload>(*device, context,
                                                 detail::SceneAccess::assets(*scene));
    };
}

} // namespace tandem
