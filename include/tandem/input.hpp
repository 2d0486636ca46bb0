// Task inputs: images the application renders on the primary (its colour, depth, motion
// vectors) that a task reads, wherever it runs. A task declares them (TaskDesc::inputs); each
// submit names, for every input in that order, the application's image and when its writes
// finish; Tandem brings the image to the task's device and hands it to the workload
// (RecordContext::inputs), and says when the application may write its image again.
//
// clang-format off
//     desc.inputs = {{"color", VK_FORMAT_R8G8B8A8_UNORM, 1920, 1080}};
//     tandem::TaskId task = runtime.register_task(desc);
//     ...                                       // the frame: render into `color`, signal
//                                               // frame_timeline = frame_value on its queue
//     tandem::InputImage color{image, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
//                              frame_timeline, frame_value};
//     tandem::SubmitResult r = runtime.submit(task, {}, std::span(&color, 1));
//     // Before writing `image` again, wait (on the GPU) for
//     // runtime.input_timeline() >= r.inputs_released.
// clang-format on
//
// How: at submit, on the primary's main queue (Tandem's batch waits for the image's writes),
// the image is copied into the slot's input image of Tandem's own, in the layout it came in
// and left in that layout; from there the input goes to the task's device on the pair's best
// path in the primary -> worker direction (zero-copy between openings of one GPU: the copy
// writes the memory both devices share; host-bridged or GPU-side, as outputs go the other
// way), and the job starts once it arrived. A task on the primary reads the slot's copy. The
// copy is what lets the application write its image again as soon as it ran, not only once
// the task's job finished. A path that fails in use is dropped for the pair in that direction
// (TaskStats::dropped_paths, DroppedTransferPath::inputs) and the task prepared again with the
// next one, as for outputs.
//
// Requirements on the application's image: a 2D colour image on the primary device, of the
// input's format and size, with VK_IMAGE_USAGE_TRANSFER_SRC_BIT, usable by the primary's main
// queue family (Runtime::primary_vulkan), one mip level and one layer.
//
// Buffers: an input may be a buffer instead (TaskInputDesc::buffer_size): a simulation's
// particles, a histogram, a frame's constants. Its bytes are copied at submit as an image's
// are, travel on the same path laid out in an RGBA8 image of Tandem's, and the job reads them
// from a buffer of its device (JobInput::buffer), byte for byte.
//
// clang-format off
//     desc.inputs = {{.name = "particles", .buffer_size = 4 * 65536}};
//     tandem::InputImage in{.wait_semaphore = sim, .wait_value = frame, .buffer = particles};
//     (void)runtime.submit(task, {}, std::span(&in, 1));
// clang-format on
//
// Lent input images: nothing copied. Instead of copying its image, the application may render
// straight into Tandem's: lend_inputs(task) reserves a slot of the task and lends its input
// images on the primary (InputLoan); the application writes them once input_timeline() reaches
// InputLoan::writable and submits naming them as the inputs' images. Between two openings of
// one GPU (the zero-copy path) the worker then reads what the application rendered, and nothing
// is copied anywhere; on the primary the job reads it; on other paths the link carries it from
// there (the submit's copy on the primary is what is saved). The batch at submit only changes
// the images' layout (TaskStats::lent_submits, input_copy_gpu_us).
//
// clang-format off
//     desc.inputs = {{.name = "color", .format = VK_FORMAT_R8G8B8A8_UNORM, .width = 1920,
//                     .height = 1080, .usage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT}};
//     ...                                        // each frame:
//     tandem::LendResult lent = runtime.lend_inputs(task);
//     if (lent.lent()) {                         // else render into your own image, as above
//         // render into lent.loan.inputs[0].image (from UNDEFINED: its contents are not kept),
//         // waiting for input_timeline() >= lent.loan.writable, on the primary's main queue
//         // family; signal frame_timeline = frame_value
//         tandem::InputImage color{lent.loan.inputs[0].image,
//                                  VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
//                                  frame_timeline, frame_value};
//         (void)runtime.submit(task, {}, std::span(&color, 1));
//     }
// clang-format on
//
// Signalled by the application: a submit makes no Vulkan call. The application signals the
// loan's own semaphore, InputLoan::written, to InputLoan::written_value in the batch that
// finishes its writes (one more signal in its own vkQueueSubmit2), and names that semaphore and
// value for every lent image. Tandem's submit then records and submits nothing on the calling
// thread: the task's own batches (its job on the primary, its input link elsewhere) wait for
// that value on the GPU and change the images' layout from the one the submit names
// (TaskStats::lent_signalled_submits; SubmitResult::inputs_released is 0, nothing of the
// application's being read). Every input must be lent, none copied; a submit that names the
// semaphore with another value than its loan's is refused (BadInputs).
//
// clang-format off
//     // in the frame's vkQueueSubmit2, beside the application's own signals:
//     const VkSemaphoreSubmitInfo signals[] = {frame_signal, lent.loan.written_signal()};
//     ...
//     const tandem::InputImage color =
//         lent.loan.input(0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL);
//     (void)runtime.submit(task, {}, std::span(&color, 1));  // no Vulkan call
// clang-format on
//
// A loan holds its slot until a submit names its images (Accepted: the loan ends; any other
// answer leaves it held, to submit again) or return_inputs() hands it back unused. The images'
// usage is TaskInputDesc::usage besides transfers and sampling; write them on the primary's main
// queue family, and submit (or return) the loan only once the writes were submitted to the
// primary (Tandem's batches follow them there). A submit may name lent images for some inputs
// and the application's own for the others (a buffer input is never lent). When the task moved
// meanwhile (the scheduler, a reconfigure, a path fallback), the submit still works: the lent
// images are then copied, as an application's would be, and the loan ends. Unregistering the
// task ends its loans; their images are freed once the primary's main queue passed everything
// submitted to it before.
//
// Chains: an input may instead be another task's output (TaskInputDesc::producer): a blur of
// what a capture task rendered, say. Such an input is never named at submit: the InputImage span
// lists the application's own inputs only, in their declared order, the chained ones left out.
// The consumer's job reads the producer's output on their device itself, nothing is copied: the
// producer's slot is held (never rewritten) until the consumer's job completed, and the
// consumer's batch waits on the GPU for the producer's job (and for its hand-off to the primary
// to have read the image, which the hand-off leaves in SHADER_READ_ONLY_OPTIMAL).
//
// clang-format off
//     tandem::TaskId capture = runtime.register_task(capture_desc);   // RGBA8, 640x360
//     tandem::TaskDesc blur = tandem::blur_task("blur", 640, 360);
//     blur.inputs[0].producer = capture;                  // reads capture's output
//     blur.inputs[0].chain = tandem::ChainMode::Matching; // blur N reads capture N
//     tandem::TaskId post = runtime.register_task(blur);  // auto: goes with `capture`
//     ...                                                 // every frame, in this order:
//     (void)runtime.submit(capture, snapshot);
//     (void)runtime.submit(post, {}, {});                 // no InputImage for a chained input
// clang-format on
//
// Which generation it reads (ChainMode): Matching, the consumer's generation N reads the
// producer's generation N; Newest, the producer's newest generation accepted when the consumer's
// submit is (it may still be running). A submit whose producer has not accepted that generation
// yet (or anything, for Newest) answers Busy with a reason and changes nothing. In Matching mode
// the producer keeps the generations its consumer has not read yet (it answers Busy once all its
// slots hold such generations): submit the two in step, and register a matching consumer before
// its producer's first submit (registration refuses it after). A generation the producer no
// longer holds, a producer that was unregistered, that runs on another device or whose shape
// changed (Runtime::reconfigure) answer Failed with TaskError::ChainBroken and a sentence (a
// matching consumer then no longer holds its producer back); the consumer's outputs already
// made stay readable.
//
// Where: a chain placed auto is placed as a unit. A consumer placed auto that reads one producer
// (through any number of its inputs) goes to that producer's device, and the scheduler places
// and moves the two together: the rule weighs the whole chain (on a worker every member's
// delivery to the primary, its transfers, against their work on the primary), and a move ends
// with both on the new device (the consumer's submits answer Preparing while the two are
// apart; the producer leaves once a matching consumer took every generation it made there, so
// none is skipped, and its own submits answer Preparing until then). A consumer placed by
// hand, or reading several producers, pins them: the scheduler moves them no more while it
// reads them (until it is unregistered or reconfigured to read others; the consumer goes to its
// first producer's device when auto).
// A consumer placed on the primary may read a producer on a
// worker: it reads the output where the producer's hand-off delivered it on the primary (the
// image a lease of it shows), copying nothing more, its batch waiting GPU-side for that
// delivery; the producer's slot is held until the consumer's job completed. A consumer placed
// on another worker reads what the producer sends there itself: the producer's job copies its
// output for that worker at the end of its own commands, and the two devices' own path (the
// pair's best, negotiated and self-tested like any other) carries it, not the primary unless
// that is the path (TaskStats::feeds says where and how much). The first such consumer on a
// worker has its producer prepared again there with that feed (the producer's submits answer
// Preparing meanwhile, so a matching consumer misses none of its generations); later ones share
// it, and it is no longer filled once no consumer there is live. A feed whose path fails in use
// is dropped for the pair and the producer prepared again with the next (its consumers answer
// Preparing meanwhile); one that cannot be made answers their submits Failed (ChainBroken).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "tandem/task_id.hpp"

namespace tandem {

// Which generation of its producer a chained input reads (see above).
enum class ChainMode {
    Matching, // the consumer's generation N reads the producer's generation N
    Newest,   // the producer's newest generation accepted when the consumer's submit is
};

// One input a task reads (TaskDesc::inputs): an image, or a buffer (`buffer_size`). Image
// formats: RGBA8, BGRA8, RGBA16F, RG16F, R32F (depth travels as R32F: copy or write it into a
// colour image). A width or height of 0 is the task's (for a chained input, the producer's).
struct TaskInputDesc {
    std::string name = "input";
    VkFormat format = VK_FORMAT_R8G8B8A8_UNORM;
    std::uint32_t width = 0;
    std::uint32_t height = 0;
    // Set: the input is this task's output (a chain), not an image of the application's. It must
    // name a live task of the same runtime whose output has this format and size (0: its size),
    // and must not make a cycle; registration and reconfigure refuse it with a sentence otherwise.
    TaskId producer;
    ChainMode chain = ChainMode::Matching;
    // Above 0: a buffer input of this many bytes (a multiple of 4, at most k_max_input_buffer),
    // named at submit by InputImage::buffer; `format`, `width` and `height` are then not used.
    // It travels on the same paths as images (the bytes laid out in an RGBA8 image of Tandem's),
    // byte for byte, and the job reads it as a buffer of its device (JobInput::buffer).
    std::uint64_t buffer_size = 0;
    // More usage for the input's images on the primary, for an application that renders into
    // lent images (see above): VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT, STORAGE_BIT or
    // TRANSFER_DST_BIT (transfers and sampling are always allowed). The format must allow it on
    // the primary (and for the zero-copy path on the task's device).
    VkImageUsageFlags usage = 0;
    // The usage the application's images named for this input at submit were created with
    // (0: not said). With VK_IMAGE_USAGE_SAMPLED_BIT, an RGBA8 or BGRA8 input is copied on the
    // primary by a compute dispatch where the primary allows it (TaskStats::
    // inputs_copied_by_compute), byte for byte as the copy command copies it: on some GPUs the
    // copy command moves a frame an order of magnitude more slowly than shader cores do (on an
    // H100, 159 against 13 us for a 1080p RGBA8 frame). Say it only when every image named for
    // the input has it. TRANSFER_SRC is needed either way (other inputs, other devices). The
    // dispatch reads through a view in the input's format (InputImage::view, or one Tandem
    // makes): an image of another 8-bit format needs VK_IMAGE_CREATE_MUTABLE_FORMAT_BIT with the
    // input's format among its view formats.
    VkImageUsageFlags application_usage = 0;
};

// The largest buffer input: 256 MiB (an RGBA8 image of 4096 x 16384 texels carries it).
inline constexpr std::uint64_t k_max_input_buffer = std::uint64_t{256} << 20;

// One input of one submit: the application's image and when its writes finish. `layout` is
// the layout it is in then; Tandem leaves it in that layout. `wait_semaphore` is a timeline
// semaphore of the primary device that reaches `wait_value` once the writes finished (on any
// queue of the primary); VK_NULL_HANDLE when they were submitted earlier to the primary's main
// queue (Tandem's copy follows them there).
// For a buffer input (TaskInputDesc::buffer_size) name `buffer` instead of `image`: the
// application's buffer on the primary, with VK_BUFFER_USAGE_TRANSFER_SRC_BIT, whose
// `buffer_offset` (a multiple of 4) starts the input's bytes; `layout` is then not used.
//     tandem::InputImage{.wait_semaphore = sim_done, .wait_value = frame, .buffer = particles}
struct InputImage {
    VkImage image = VK_NULL_HANDLE;
    VkImageLayout layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
    VkSemaphore wait_semaphore = VK_NULL_HANDLE;
    std::uint64_t wait_value = 0;
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceSize buffer_offset = 0;
    // Optional, for an input copied by a compute dispatch (TaskInputDesc::application_usage): a
    // 2D view of the whole image in the input's format, with SAMPLED usage, alive until
    // `inputs_released` is reached. Without it Tandem makes a view for each copy, which costs
    // the submit's caller a driver call (tens of microseconds on some drivers).
    VkImageView view = VK_NULL_HANDLE;
};

// One input image lent to the application (Runtime::lend_inputs): an image of the primary
// device, of the input's format and size, that its submit copies nothing from. A buffer input
// is not lent: its entry is empty (image VK_NULL_HANDLE), and the submit names the
// application's buffer for it as usual.
struct LentInput {
    VkImage image = VK_NULL_HANDLE;
    VkImageView view = VK_NULL_HANDLE; // a 2D colour view of the whole image
    VkFormat format = VK_FORMAT_UNDEFINED;
    VkExtent2D extent{};
};

// A loan of one slot's input images (see above). `inputs` has one entry per input the
// application names at submit, in that order (chained ones left out, as in the InputImage
// span). The images' contents are not kept: write them from VK_IMAGE_LAYOUT_UNDEFINED, once
// Runtime::input_timeline() reaches `writable` (the slot's last reads of them finished).
// `written` is the loan's own timeline semaphore on the primary: signal it to `written_value`
// from the batch that finishes the writes, and name it in the submit (see "Signalled by the
// application" above) so that the submit makes no Vulkan call. Owned by the runtime.
struct InputLoan {
    std::uint64_t ticket = 0; // unique within the runtime; 0: no loan
    std::vector<LentInput> inputs;
    std::uint64_t writable = 0;
    VkSemaphore written = VK_NULL_HANDLE;
    std::uint64_t written_value = 0;

    // The signal to add to the batch that finishes the writes (its vkQueueSubmit2's
    // pSignalSemaphoreInfos): `written` to `written_value` once `stage` of its commands ran.
    [[nodiscard]] VkSemaphoreSubmitInfo written_signal(
        VkPipelineStageFlags2 stage = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT) const noexcept {
        VkSemaphoreSubmitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
        info.semaphore = written;
        info.value = written_value;
        info.stageMask = stage;
        return info;
    }
    // The submit's entry for lent input `i`: its image, left in `layout` by the writes, which
    // finish when `written` reaches `written_value` (the submit then makes no Vulkan call).
    [[nodiscard]] InputImage input(std::size_t i, VkImageLayout layout) const {
        return InputImage{inputs.at(i).image, layout, written, written_value};
    }
};

// One input as a job's workload sees it (RecordContext::inputs): an image of the task's device
// holding the submit's input, in `layout` (SHADER_READ_ONLY_OPTIMAL; GENERAL where a CPU device
// reads it in the host memory it crossed, RuntimeOptions::cpu_reads_inputs_in_place), readable
// by record()'s
// commands from their first stage on (Tandem's job waits for it to arrive). Its usage allows
// sampling and transfers both ways; the commands may change it (it is rewritten before the
// next job reads it) but must leave it in `layout`.
// A chained input (`chained`) is the producer's output itself, shared with the application's
// leases and other consumers: read it in `layout` (SHADER_READ_ONLY_OPTIMAL; GENERAL on a CPU
// device where the host-imported path's staging is the image, written or read in place; its
// usage allows sampling), and never write it or change its layout.
// A buffer input has `buffer` (its `size` bytes from offset 0) and no image: a buffer of the
// task's device, usable as a storage, uniform and transfer buffer, holding the submit's bytes
// and readable from the job's first stage; the commands may change it (it is rewritten before
// the next job reads it).
struct JobInput {
    VkImage image = VK_NULL_HANDLE;
    VkImageView view = VK_NULL_HANDLE; // a 2D colour view of the whole image
    VkImageLayout layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
    VkFormat format = VK_FORMAT_UNDEFINED;
    VkExtent2D extent{};
    bool chained = false;             // the producer's output, read in place (see above)
    std::uint64_t generation = 0;     // chained: the producer's generation it holds
    VkBuffer buffer = VK_NULL_HANDLE; // a buffer input (TaskInputDesc::buffer_size)
    VkDeviceSize size = 0;            // its bytes
};

} // namespace tandem
