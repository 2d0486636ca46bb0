#include "dispatch_table.hpp"

namespace tandem::layer {
namespace {

template <typename Function>
void load(Function& slot, PFN_vkVoidFunction function) {
    slot = reinterpret_cast<Function>(function);
}

} // namespace

InstanceDispatch load_instance_dispatch(VkInstance instance, PFN_vkGetInstanceProcAddr next) {
    InstanceDispatch table;
    table.GetInstanceProcAddr = next;
    load(table.DestroyInstance, next(instance, "vkDestroyInstance"));
    load(table.GetPhysicalDeviceProperties, next(instance, "vkGetPhysicalDeviceProperties"));
    load(table.GetPhysicalDeviceSurfaceCapabilitiesKHR,
         next(instance, "vkGetPhysicalDeviceSurfaceCapabilitiesKHR"));
    load(table.GetPhysicalDeviceFeatures2, next(instance, "vkGetPhysicalDeviceFeatures2"));
    load(table.GetPhysicalDeviceProperties2, next(instance, "vkGetPhysicalDeviceProperties2"));
    load(table.EnumerateDeviceExtensionProperties,
         next(instance, "vkEnumerateDeviceExtensionProperties"));
    load(table.EnumeratePhysicalDevices, next(instance, "vkEnumeratePhysicalDevices"));
    load(table.GetPhysicalDeviceMemoryProperties,
         next(instance, "vkGetPhysicalDeviceMemoryProperties"));
    load(table.GetPhysicalDeviceSurfaceCapabilities2KHR,
         next(instance, "vkGetPhysicalDeviceSurfaceCapabilities2KHR"));
    load(table.GetPhysicalDeviceImageFormatProperties,
         next(instance, "vkGetPhysicalDeviceImageFormatProperties"));
    load(table.GetPhysicalDeviceFormatProperties,
         next(instance, "vkGetPhysicalDeviceFormatProperties"));
    load(table.GetPhysicalDeviceSurfaceFormatsKHR,
         next(instance, "vkGetPhysicalDeviceSurfaceFormatsKHR"));
    load(table.DestroySurfaceKHR, next(instance, "vkDestroySurfaceKHR"));
    load(table.GetPhysicalDeviceQueueFamilyProperties,
         next(instance, "vkGetPhysicalDeviceQueueFamilyProperties"));
    load(table.GetPhysicalDeviceSurfaceSupportKHR,
         next(instance, "vkGetPhysicalDeviceSurfaceSupportKHR"));
    return table;
}

DeviceDispatch load_device_dispatch(VkDevice device, PFN_vkGetDeviceProcAddr next) {
    DeviceDispatch table;
    table.GetDeviceProcAddr = next;
    load(table.DestroyDevice, next(device, "vkDestroyDevice"));
    load(table.GetDeviceQueue, next(device, "vkGetDeviceQueue"));
    load(table.GetDeviceQueue2, next(device, "vkGetDeviceQueue2"));
    load(table.QueueSubmit, next(device, "vkQueueSubmit"));
    load(table.QueueSubmit2, next(device, "vkQueueSubmit2"));
    load(table.QueueSubmit2KHR, next(device, "vkQueueSubmit2KHR"));
    load(table.QueueWaitIdle, next(device, "vkQueueWaitIdle"));
    load(table.QueueBindSparse, next(device, "vkQueueBindSparse"));
    load(table.DeviceWaitIdle, next(device, "vkDeviceWaitIdle"));
    load(table.QueuePresentKHR, next(device, "vkQueuePresentKHR"));
    load(table.CreateSwapchainKHR, next(device, "vkCreateSwapchainKHR"));
    load(table.DestroySwapchainKHR, next(device, "vkDestroySwapchainKHR"));
    load(table.GetSwapchainImagesKHR, next(device, "vkGetSwapchainImagesKHR"));
    load(table.AcquireNextImageKHR, next(device, "vkAcquireNextImageKHR"));
    load(table.AcquireNextImage2KHR, next(device, "vkAcquireNextImage2KHR"));
    load(table.CreateSemaphore, next(device, "vkCreateSemaphore"));
    load(table.DestroySemaphore, next(device, "vkDestroySemaphore"));
    load(table.GetSemaphoreCounterValue, next(device, "vkGetSemaphoreCounterValue"));
    load(table.WaitSemaphores, next(device, "vkWaitSemaphores"));
    load(table.CreateCommandPool, next(device, "vkCreateCommandPool"));
    load(table.DestroyCommandPool, next(device, "vkDestroyCommandPool"));
    load(table.AllocateCommandBuffers, next(device, "vkAllocateCommandBuffers"));
    load(table.BeginCommandBuffer, next(device, "vkBeginCommandBuffer"));
    load(table.EndCommandBuffer, next(device, "vkEndCommandBuffer"));
    load(table.ResetCommandBuffer, next(device, "vkResetCommandBuffer"));
    load(table.CmdPipelineBarrier, next(device, "vkCmdPipelineBarrier"));
    load(table.CmdCopyImage, next(device, "vkCmdCopyImage"));
    load(table.CreateBuffer, next(device, "vkCreateBuffer"));
    load(table.DestroyBuffer, next(device, "vkDestroyBuffer"));
    load(table.GetBufferMemoryRequirements, next(device, "vkGetBufferMemoryRequirements"));
    load(table.AllocateMemory, next(device, "vkAllocateMemory"));
    load(table.FreeMemory, next(device, "vkFreeMemory"));
    load(table.BindBufferMemory, next(device, "vkBindBufferMemory"));
    load(table.MapMemory, next(device, "vkMapMemory"));
    load(table.InvalidateMappedMemoryRanges, next(device, "vkInvalidateMappedMemoryRanges"));
    load(table.CmdCopyImageToBuffer, next(device, "vkCmdCopyImageToBuffer"));
    load(table.CreateImage, next(device, "vkCreateImage"));
    load(table.DestroyImage, next(device, "vkDestroyImage"));
    load(table.GetImageMemoryRequirements, next(device, "vkGetImageMemoryRequirements"));
    load(table.BindImageMemory, next(device, "vkBindImageMemory"));
    load(table.CmdBlitImage, next(device, "vkCmdBlitImage"));
    load(table.CreateQueryPool, next(device, "vkCreateQueryPool"));
    load(table.DestroyQueryPool, next(device, "vkDestroyQueryPool"));
    load(table.CmdResetQueryPool, next(device, "vkCmdResetQueryPool"));
    load(table.CmdWriteTimestamp, next(device, "vkCmdWriteTimestamp"));
    load(table.GetQueryPoolResults, next(device, "vkGetQueryPoolResults"));
    load(table.CreateImageView, next(device, "vkCreateImageView"));
    load(table.DestroyImageView, next(device, "vkDestroyImageView"));
    load(table.CreateShaderModule, next(device, "vkCreateShaderModule"));
    load(table.DestroyShaderModule, next(device, "vkDestroyShaderModule"));
    load(table.CreateDescriptorSetLayout, next(device, "vkCreateDescriptorSetLayout"));
    load(table.DestroyDescriptorSetLayout, next(device, "vkDestroyDescriptorSetLayout"));
    load(table.CreatePipelineLayout, next(device, "vkCreatePipelineLayout"));
    load(table.DestroyPipelineLayout, next(device, "vkDestroyPipelineLayout"));
    load(table.CreateComputePipelines, next(device, "vkCreateComputePipelines"));
    load(table.DestroyPipeline, next(device, "vkDestroyPipeline"));
    load(table.CreateDescriptorPool, next(device, "vkCreateDescriptorPool"));
    load(table.DestroyDescriptorPool, next(device, "vkDestroyDescriptorPool"));
    load(table.AllocateDescriptorSets, next(device, "vkAllocateDescriptorSets"));
    load(table.UpdateDescriptorSets, next(device, "vkUpdateDescriptorSets"));
    load(table.CmdBindPipeline, next(device, "vkCmdBindPipeline"));
    load(table.CmdBindDescriptorSets, next(device, "vkCmdBindDescriptorSets"));
    load(table.CmdDispatch, next(device, "vkCmdDispatch"));
    return table;
}

} // namespace tandem::layer
