// What the lab's Vulkan layers (naga/spv_dump_layer.c, driver/pipeline_stats_layer.c) share: the
// loader's link to the next layer in vkCreateInstance and vkCreateDevice, taken and advanced for
// the layer after this one, and the two entry points through which the loader finds the layer's
// hooks.
#include <string.h>
#include <vulkan/vk_layer.h>

#define EXPORT __attribute__((visibility("default")))

// The next layer's lookups, kept by the layer's vkCreateInstance and vkCreateDevice.
static PFN_vkGetInstanceProcAddr nextGipa;
static PFN_vkGetDeviceProcAddr nextGdpa;

// The loader puts its link to the next layer in pNext; the instance and device links share a layout.
static void *layerLink(const void *pNext, VkStructureType type) {
  for (VkBaseInStructure *s = (VkBaseInStructure *)pNext; s; s = (VkBaseInStructure *)s->pNext) {
    VkLayerInstanceCreateInfo *info = (VkLayerInstanceCreateInfo *)s;
    if (s->sType == type && info->function == VK_LAYER_LINK_INFO) return info;
  }
  return NULL;
}

// The next layer's vkCreateInstance (NULL without a link); its vkGetInstanceProcAddr in *gipa.
static PFN_vkCreateInstance nextCreateInstance(const VkInstanceCreateInfo *ci, PFN_vkGetInstanceProcAddr *gipa) {
  VkLayerInstanceCreateInfo *link = layerLink(ci->pNext, VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO);
  if (!link) return NULL;
  *gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
  link->u.pLayerInfo = link->u.pLayerInfo->pNext;
  return (PFN_vkCreateInstance)(*gipa)(NULL, "vkCreateInstance");
}

// The next layer's vkCreateDevice (NULL without a link); its vkGetDeviceProcAddr in *gdpa.
static PFN_vkCreateDevice nextCreateDevice(const VkDeviceCreateInfo *ci, PFN_vkGetDeviceProcAddr *gdpa) {
  VkLayerDeviceCreateInfo *link = layerLink(ci->pNext, VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO);
  if (!link) return NULL;
  PFN_vkGetInstanceProcAddr gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
  *gdpa = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
  link->u.pLayerInfo = link->u.pLayerInfo->pNext;
  return (PFN_vkCreateDevice)gipa(NULL, "vkCreateDevice");
}

// The loader's entry points for a layer that wraps vkCreateInstance and vkCreateDevice
// (CREATE_INSTANCE, CREATE_DEVICE) and one device-level function, NAME, with HOOK; every other
// name goes to the next layer.
#define LAYER_ENTRY_POINTS(CREATE_INSTANCE, CREATE_DEVICE, NAME, HOOK)                                \
  EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetDeviceProcAddr(VkDevice device, const char *name) { \
    if (!strcmp(name, "vkGetDeviceProcAddr")) return (PFN_vkVoidFunction)vkGetDeviceProcAddr;           \
    if (!strcmp(name, NAME)) return (PFN_vkVoidFunction)HOOK;                                          \
    return nextGdpa(device, name);                                                                     \
  }                                                                                                    \
  EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetInstanceProcAddr(VkInstance instance,           \
                                                                        const char *name) {            \
    if (!strcmp(name, "vkGetInstanceProcAddr")) return (PFN_vkVoidFunction)vkGetInstanceProcAddr;       \
    if (!strcmp(name, "vkCreateInstance")) return (PFN_vkVoidFunction)CREATE_INSTANCE;                 \
    if (!strcmp(name, "vkCreateDevice")) return (PFN_vkVoidFunction)CREATE_DEVICE;                     \
    if (!strcmp(name, "vkGetDeviceProcAddr")) return (PFN_vkVoidFunction)vkGetDeviceProcAddr;           \
    if (!strcmp(name, NAME)) return (PFN_vkVoidFunction)HOOK;                                          \
    return nextGipa(instance, name);                                                                   \
  }
