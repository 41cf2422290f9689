// A Vulkan layer that writes every SPIR-V module the application hands to vkCreateShaderModule
// to $SPV_DUMP_DIR/NNN.spv, then passes the call on. It lets us read what naga (inside Deno's
// WebGPU) gives the driver, since a release Mesa cannot dump it. One driver (lavapipe) is
// assumed: the next layer's entry points are kept in globals, not per instance or device.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vk_layer.h>

#define EXPORT __attribute__((visibility("default")))

static PFN_vkGetInstanceProcAddr nextGipa;
static PFN_vkGetDeviceProcAddr nextGdpa;
static PFN_vkCreateShaderModule nextCreateShaderModule;
static int modulesWritten;

// The loader puts its link to the next layer in pNext; take ours and advance it for the next.
static void *layerLink(const void *pNext, VkStructureType type) {
  for (VkBaseInStructure *s = (VkBaseInStructure *)pNext; s; s = (VkBaseInStructure *)s->pNext) {
    VkLayerInstanceCreateInfo *info = (VkLayerInstanceCreateInfo *)s;  // same layout as the device one
    if (s->sType == type && info->function == VK_LAYER_LINK_INFO) return info;
  }
  return NULL;
}

static VKAPI_ATTR VkResult VKAPI_CALL dumpCreateInstance(const VkInstanceCreateInfo *ci,
    const VkAllocationCallbacks *alloc, VkInstance *instance) {
  VkLayerInstanceCreateInfo *link = layerLink(ci->pNext, VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO);
  if (!link) return VK_ERROR_INITIALIZATION_FAILED;
  nextGipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
  link->u.pLayerInfo = link->u.pLayerInfo->pNext;
  PFN_vkCreateInstance next = (PFN_vkCreateInstance)nextGipa(NULL, "vkCreateInstance");
  return next(ci, alloc, instance);
}

static VKAPI_ATTR VkResult VKAPI_CALL dumpCreateDevice(VkPhysicalDevice gpu, const VkDeviceCreateInfo *ci,
    const VkAllocationCallbacks *alloc, VkDevice *device) {
  VkLayerDeviceCreateInfo *link = layerLink(ci->pNext, VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO);
  if (!link) return VK_ERROR_INITIALIZATION_FAILED;
  PFN_vkGetInstanceProcAddr gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
  nextGdpa = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
  link->u.pLayerInfo = link->u.pLayerInfo->pNext;
  PFN_vkCreateDevice next = (PFN_vkCreateDevice)gipa(NULL, "vkCreateDevice");
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

EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetDeviceProcAddr(VkDevice device, const char *name) {
  if (!strcmp(name, "vkGetDeviceProcAddr")) return (PFN_vkVoidFunction)vkGetDeviceProcAddr;
  if (!strcmp(name, "vkCreateShaderModule")) return (PFN_vkVoidFunction)dumpCreateShaderModule;
  return nextGdpa(device, name);
}

EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetInstanceProcAddr(VkInstance instance, const char *name) {
  if (!strcmp(name, "vkGetInstanceProcAddr")) return (PFN_vkVoidFunction)vkGetInstanceProcAddr;
  if (!strcmp(name, "vkCreateInstance")) return (PFN_vkVoidFunction)dumpCreateInstance;
  if (!strcmp(name, "vkCreateDevice")) return (PFN_vkVoidFunction)dumpCreateDevice;
  if (!strcmp(name, "vkGetDeviceProcAddr")) return (PFN_vkVoidFunction)vkGetDeviceProcAddr;
  if (!strcmp(name, "vkCreateShaderModule")) return (PFN_vkVoidFunction)dumpCreateShaderModule;
  return nextGipa(instance, name);
}
