/** PNG checks shared by the chart and site tests: decode Chromium's and resvg's PNGs, blankness. */
import assert from "node:assert/strict";

/** Width, height and RGBA pixels of an 8-bit, non-interlaced PNG (what resvg and Chromium write). */
export async function decodePng(png: Uint8Array) {
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  assert.deepEqual([...png.subarray(0, 8)], signature, "not a PNG");
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  let width = 0, height = 0, colorType = 0;
  const idat: Uint8Array[] = [];
  for (let at = 8; at < png.length;) {
    const length = view.getUint32(at);
    const type = String.fromCharCode(...png.subarray(at + 4, at + 8));
    const data = png.subarray(at + 8, at + 8 + length);
    if (type === "IHDR") {
      width = view.getUint32(at + 8);
      height = view.getUint32(at + 12);
      assert.equal(data[8], 8, "bit depth");
      colorType = data[9];
      assert.equal(data[12], 0, "interlaced PNG");
    } else if (type === "IDAT") idat.push(data);
    at += 12 + length;
  }
  const channels = { 2: 3, 6: 4 }[colorType];
  assert.ok(channels, `colour type ${colorType}`);
  const stream = new Blob(idat as BlobPart[]).stream().pipeThrough(
    new DecompressionStream("deflate"),
  );
  const raw = new Uint8Array(await new Response(stream).arrayBuffer());
  const stride = width * channels;
  const pixels = new Uint8Array(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? pixels[y * stride + x - channels] : 0;
      const b = y > 0 ? pixels[(y - 1) * stride + x] : 0;
      const c = x >= channels && y > 0 ? pixels[(y - 1) * stride + x - channels] : 0;
      const p = a + b - c;
      const pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
      const predictor = [0, a, b, (a + b) >> 1, pa <= pb && pa <= pc ? a : pb <= pc ? b : c][
        filter
      ];
      pixels[y * stride + x] = (line[x] + predictor) & 255;
    }
  }
  return { width, height, channels, pixels };
}

/** Variance of the grey level: zero for a blank image. */
export function greyVariance(img: { pixels: Uint8Array; channels: number }): number {
  let sum = 0, sq = 0, count = 0;
  for (let i = 0; i < img.pixels.length; i += img.channels) {
    const g = (img.pixels[i] + img.pixels[i + 1] + img.pixels[i + 2]) / 3;
    sum += g;
    sq += g * g;
    count++;
  }
  const mean = sum / count;
  return sq / count - mean * mean;
}

export async function assertPngNotBlank(png: Uint8Array, minWidth: number) {
  const img = await decodePng(png);
  assert.ok(img.width >= minWidth && img.height > 50, `PNG ${img.width}x${img.height}`);
  assert.ok(greyVariance(img) > 50, "PNG is blank");
  return img;
}
