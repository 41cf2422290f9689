/**
 * Typed errors. Every failure a reader can cause (a bad shape, a kernel too big for the device,
 * a missing feature, a WGSL typo) gets its own class and a message that says what to do.
 */

/** Base class: `kind` lets callers and tests branch without `instanceof` chains. */
export class GemmError extends Error {
  constructor(readonly kind: string, message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** No WebGPU adapter: says what to install. */
export class NoAdapterError extends GemmError {
  constructor(detail = "") {
    super(
      "no-adapter",
      "No WebGPU adapter found." + (detail ? ` (${detail})` : "") +
        " Install a GPU driver with Vulkan support, or Mesa's software Vulkan driver: " +
        "`sudo apt-get install mesa-vulkan-drivers` (Debian/Ubuntu).",
    );
  }
}

/** A matrix dimension that is not a positive integer, or an array of the wrong length. */
export class ShapeError extends GemmError {
  constructor(message: string) {
    super("shape", message);
  }
}

/** A shape or kernel that exceeds a device limit; names the limit and what would fit. */
export class LimitError extends GemmError {
  constructor(readonly limit: string, message: string) {
    super("limit", message);
  }
}

/** The device lacks a feature the kernel needs (e.g. shader-f16). */
export class FeatureError extends GemmError {
  constructor(readonly feature: string, message: string) {
    super("feature", message);
  }
}

/** WGSL that does not compile; `line` points into the kernel file. */
export class WgslCompileError extends GemmError {
  constructor(readonly file: string, readonly line: number | undefined, message: string) {
    super("wgsl", `${file}${line !== undefined ? `:${line}` : ""}: ${message}`);
  }
}

/** A WebGPU validation, out-of-memory or internal error caught by an error scope. */
export class GpuValidationError extends GemmError {
  constructor(message: string) {
    super("validation", message);
  }
}

/** The device was lost; the run stops with what it finished. */
export class DeviceLostError extends GemmError {
  constructor(reason: string) {
    super("device-lost", `GPU device lost: ${reason}`);
  }
}

/** A kernel's output disagrees with the float64 reference (or holds NaN / unwritten values). */
export class ValidationFailedError extends GemmError {
  constructor(message: string) {
    super("wrong-result", message);
  }
}

/** A malformed command-line flag. */
export class UsageError extends GemmError {
  constructor(message: string) {
    super("usage", message);
  }
}
