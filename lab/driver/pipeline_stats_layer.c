// A Vulkan layer that asks the driver what it compiled each compute pipeline into. It enables
// VK_KHR_pipeline_executable_properties on the device, creates every compute pipeline with the
// driver's statistics and internal representations captured, and appends one JSON line per
// pipeline to $PIPELINE_STATS_FILE: each executable's name, subgroup size and statistics (on
// NVIDIA, registers per invocation among them). An internal representation the driver offers is
// written beside the file as <file>.<seq>.<executable>.<n>.txt (or .bin). The application (Deno's
// WebGPU) sees nothing else change. One driver is assumed: the next layer's entry points are
// kept in globals, not per instance or device.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../vulkan_layer.h"

#define EXTENSION VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME

static VkInstance theInstance;
static PFN_vkCreateComputePipelines nextCreateComputePipelines;
static PFN_vkGetPipelineExecutablePropertiesKHR getProperties;
static PFN_vkGetPipelineExecutableStatisticsKHR getStatistics;
static PFN_vkGetPipelineExecutableInternalRepresentationsKHR getRepresentations;
static int captureOn;  // the device has the extension and its feature enabled
static int pipelinesWritten;

static VKAPI_ATTR VkResult VKAPI_CALL statsCreateInstance(const VkInstanceCreateInfo *ci,
    const VkAllocationCallbacks *alloc, VkInstance *instance) {
  PFN_vkCreateInstance next = nextCreateInstance(ci, &nextGipa);
  if (!next) return VK_ERROR_INITIALIZATION_FAILED;
  VkResult result = next(ci, alloc, instance);
  if (result == VK_SUCCESS) theInstance = *instance;
  return result;
}

static int deviceHasExtension(VkPhysicalDevice gpu) {
  PFN_vkEnumerateDeviceExtensionProperties enumerate =
      (PFN_vkEnumerateDeviceExtensionProperties)nextGipa(theInstance, "vkEnumerateDeviceExtensionProperties");
  uint32_t n = 0;
  if (!enumerate || enumerate(gpu, NULL, &n, NULL) != VK_SUCCESS) return 0;
  VkExtensionProperties *all = calloc(n, sizeof *all);
  int found = 0;
  if (enumerate(gpu, NULL, &n, all) == VK_SUCCESS)
    for (uint32_t i = 0; i < n; i++) found |= !strcmp(all[i].extensionName, EXTENSION);
  free(all);
  return found;
}

static VKAPI_ATTR VkResult VKAPI_CALL statsCreateDevice(VkPhysicalDevice gpu, const VkDeviceCreateInfo *ci,
    const VkAllocationCallbacks *alloc, VkDevice *device) {
  PFN_vkCreateDevice next = nextCreateDevice(ci, &nextGdpa);
  if (!next) return VK_ERROR_INITIALIZATION_FAILED;

  VkDeviceCreateInfo copy = *ci;
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR feature = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR,
      .pNext = (void *)ci->pNext,
      .pipelineExecutableInfo = VK_TRUE,
  };
  const char **names = calloc(ci->enabledExtensionCount + 1, sizeof *names);
  captureOn = deviceHasExtension(gpu);
  if (captureOn) {
    int listed = 0;
    for (uint32_t i = 0; i < ci->enabledExtensionCount; i++) {
      names[i] = ci->ppEnabledExtensionNames[i];
      listed |= !strcmp(names[i], EXTENSION);
    }
    copy.enabledExtensionCount = ci->enabledExtensionCount + !listed;
    if (!listed) names[ci->enabledExtensionCount] = EXTENSION;
    copy.ppEnabledExtensionNames = names;
    copy.pNext = &feature;
  } else {
    fprintf(stderr, "pipeline_stats_layer: the device lacks %s; nothing is captured\n", EXTENSION);
  }
  VkResult result = next(gpu, &copy, alloc, device);
  free(names);
  if (result != VK_SUCCESS && captureOn) {
    fprintf(stderr, "pipeline_stats_layer: the device refused %s (%d); nothing is captured\n", EXTENSION, result);
    captureOn = 0;
    result = next(gpu, ci, alloc, device);
  }
  if (result != VK_SUCCESS) return result;
  nextCreateComputePipelines = (PFN_vkCreateComputePipelines)nextGdpa(*device, "vkCreateComputePipelines");
  getProperties = (PFN_vkGetPipelineExecutablePropertiesKHR)nextGdpa(*device, "vkGetPipelineExecutablePropertiesKHR");
  getStatistics = (PFN_vkGetPipelineExecutableStatisticsKHR)nextGdpa(*device, "vkGetPipelineExecutableStatisticsKHR");
  getRepresentations = (PFN_vkGetPipelineExecutableInternalRepresentationsKHR)nextGdpa(
      *device, "vkGetPipelineExecutableInternalRepresentationsKHR");
  captureOn = captureOn && getProperties && getStatistics && getRepresentations;
  return result;
}

static void jsonString(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c < 0x20) fprintf(f, "\\u%04x", c);
    else fputc(c, f);
  }
  fputc('"', f);
}

static void writeStatistics(FILE *f, VkDevice device, const VkPipelineExecutableInfoKHR *which) {
  uint32_t n = 0;
  getStatistics(device, which, &n, NULL);
  VkPipelineExecutableStatisticKHR *stats = calloc(n, sizeof *stats);
  for (uint32_t i = 0; i < n; i++) stats[i].sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR;
  getStatistics(device, which, &n, stats);
  fputs("\"statistics\":[", f);
  for (uint32_t i = 0; i < n; i++) {
    fputs(i ? ",{\"name\":" : "{\"name\":", f);
    jsonString(f, stats[i].name);
    fputs(",\"description\":", f);
    jsonString(f, stats[i].description);
    switch (stats[i].format) {
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
        fprintf(f, ",\"value\":%s}", stats[i].value.b32 ? "true" : "false");
        break;
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
        fprintf(f, ",\"value\":%lld}", (long long)stats[i].value.i64);
        break;
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
        fprintf(f, ",\"value\":%llu}", (unsigned long long)stats[i].value.u64);
        break;
      default:
        fprintf(f, ",\"value\":%.17g}", stats[i].value.f64);
    }
  }
  fputc(']', f);
  free(stats);
}

static void writeRepresentations(FILE *f, VkDevice device, const VkPipelineExecutableInfoKHR *which,
    const char *base, int seq) {
  uint32_t n = 0;
  getRepresentations(device, which, &n, NULL);
  VkPipelineExecutableInternalRepresentationKHR *reps = calloc(n, sizeof *reps);
  for (uint32_t i = 0; i < n; i++)
    reps[i].sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INTERNAL_REPRESENTATION_KHR;
  getRepresentations(device, which, &n, reps);  // sizes
  for (uint32_t i = 0; i < n; i++) reps[i].pData = calloc(1, reps[i].dataSize + 1);
  getRepresentations(device, which, &n, reps);
  fputs(",\"representations\":[", f);
  for (uint32_t i = 0; i < n; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s.%03d.%u.%u.%s", base, seq, which->executableIndex, i,
        reps[i].isText ? "txt" : "bin");
    FILE *out = fopen(path, "wb");
    if (out) {
      fwrite(reps[i].pData, 1, reps[i].isText && reps[i].dataSize ? reps[i].dataSize - 1 : reps[i].dataSize, out);
      fclose(out);
    }
    fputs(i ? ",{\"name\":" : "{\"name\":", f);
    jsonString(f, reps[i].name);
    fprintf(f, ",\"bytes\":%zu,\"file\":", reps[i].dataSize);
    jsonString(f, strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
    fputc('}', f);
    free(reps[i].pData);
  }
  fputc(']', f);
  free(reps);
}

static void writePipeline(VkDevice device, VkPipeline pipeline, const char *entry) {
  const char *base = getenv("PIPELINE_STATS_FILE");
  if (!base) return;
  FILE *f = fopen(base, "a");
  if (!f) return;
  int seq = pipelinesWritten++;
  VkPipelineInfoKHR info = {.sType = VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR, .pipeline = pipeline};
  uint32_t n = 0;
  getProperties(device, &info, &n, NULL);
  VkPipelineExecutablePropertiesKHR *props = calloc(n, sizeof *props);
  for (uint32_t i = 0; i < n; i++) props[i].sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR;
  getProperties(device, &info, &n, props);
  fprintf(f, "{\"seq\":%d,\"entryPoint\":", seq);
  jsonString(f, entry);
  fputs(",\"executables\":[", f);
  for (uint32_t i = 0; i < n; i++) {
    VkPipelineExecutableInfoKHR which = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR, .pipeline = pipeline, .executableIndex = i};
    fputs(i ? ",{\"name\":" : "{\"name\":", f);
    jsonString(f, props[i].name);
    fputs(",\"description\":", f);
    jsonString(f, props[i].description);
    fprintf(f, ",\"subgroupSize\":%u,", props[i].subgroupSize);
    writeStatistics(f, device, &which);
    writeRepresentations(f, device, &which, base, seq);
    fputc('}', f);
  }
  fputs("]}\n", f);
  fclose(f);
  free(props);
}

static VKAPI_ATTR VkResult VKAPI_CALL statsCreateComputePipelines(VkDevice device, VkPipelineCache cache,
    uint32_t count, const VkComputePipelineCreateInfo *infos, const VkAllocationCallbacks *alloc,
    VkPipeline *pipelines) {
  if (!captureOn) return nextCreateComputePipelines(device, cache, count, infos, alloc, pipelines);
  VkComputePipelineCreateInfo *copy = calloc(count, sizeof *copy);
  for (uint32_t i = 0; i < count; i++) {
    copy[i] = infos[i];
    copy[i].flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR |
                     VK_PIPELINE_CREATE_CAPTURE_INTERNAL_REPRESENTATIONS_BIT_KHR;
  }
  VkResult result = nextCreateComputePipelines(device, cache, count, copy, alloc, pipelines);
  if (result == VK_SUCCESS)
    for (uint32_t i = 0; i < count; i++) writePipeline(device, pipelines[i], infos[i].stage.pName);
  free(copy);
  return result;
}

LAYER_ENTRY_POINTS(statsCreateInstance, statsCreateDevice, "vkCreateComputePipelines", statsCreateComputePipelines)
