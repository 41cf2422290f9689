// A Vulkan layer that writes every SPIR-V module the application hands to vkCreateShaderModule
// to $SPV_DUMP_DIR/NNN.spv, then passes the call on. It lets us read what naga (inside Deno's
// WebGPU) gives the driver, since a release Mesa cannot dump it. One driver (lavapipe) is
// assumed: the next layer's entry points are kept in globals, not per instance or device.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../vulkan_layer.h"

static PFN_vkCreateShaderModule nextCreateShaderModule;
static int modulesWritten;

static VKAPI_ATTR VkResult VKAPI_CALL dumpCreateInstance(const VkInstanceCreateInfo *ci,
    const VkAllocationCallbacks *alloc, VkInstance *instance) {
  PFN_vkCreateInstance next = nextCreateInstance(ci, &nextGipa);
  return next ? next(ci, alloc, instance) : VK_ERROR_INITIALIZATION_FAILED;
}

static VKAPI_ATTR VkResult VKAPI_CALL dumpCreateDevice(VkPhysicalDevice gpu, const VkDeviceCreateInfo *ci,
    const VkAllocationCallbacks *alloc, VkDevice *device) {
  PFN_vkCreateDevice next = nextCreateDevice(ci, &nextGdpa);
  if (!next) return VK_ERROR_INITIALIZATION_FAILED;
  VkResult result = next(gpu, ci, alloc, device);
  if (result == VK_SUCCESS)
    nextCreateShaderModule = (PFN_vkCreateShaderModule)nextGdpa(*device, "vkCreateShaderModule");
  return result;
}

static VKAPI_ATTR VkResult VKAPI_CALL dumpCreateShaderModule(VkDevice device, const VkShaderModuleCreateInfo *ci,
    const VkAllocationCallbacks *alloc, VkShaderModule *module) {
  const char *dir = getenv("SPV_DUMP_DIR");
  if (dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%03d.spv", dir, modulesWritten++);
    FILE *f = fopen(path, "wb");
    if (f) {
      fwrite(ci->pCode, 1, ci->codeSize, f);
      fclose(f);
    }
  }
  return nextCreateShaderModule(device, ci, alloc, module);
}

LAYER_ENTRY_POINTS(dumpCreateInstance, dumpCreateDevice, "vkCreateShaderModule", dumpCreateShaderModule)
