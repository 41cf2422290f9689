#!/usr/bin/env python3
"""Carve NVIDIA machine code out of the Vulkan driver's shader disk cache (lab: not part of the
product). The driver stores what it compiled in files under __GL_SHADER_DISK_CACHE_PATH; where a
file holds an ELF image (a cubin), this cuts it out by its section-header table's end and
disassembles it with cuobjdump (or nvdisasm), one .sass file per image, and prints a count of the
instructions by opcode. Usage: sass_from_cache.py CACHE_DIR OUT_DIR [CUDA_BIN_DIR]"""
import os, re, struct, subprocess, sys
from collections import Counter

cache, out = sys.argv[1], sys.argv[2]
bindir = sys.argv[3] if len(sys.argv) > 3 else "/usr/local/cuda-13.0/bin"
os.makedirs(out, exist_ok=True)
images = 0
for root, _, files in os.walk(cache):
    for name in files:
        data = open(os.path.join(root, name), "rb").read()
        for m in re.finditer(rb"\x7fELF\x02\x01", data):
            at = m.start()
            if at + 64 > len(data):
                continue
            phoff, shoff = struct.unpack_from("<QQ", data, at + 0x20)
            phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", data, at + 0x36)
            size = max(shoff + shentsize * shnum, phoff + phentsize * phnum)
            if shoff == 0 or at + size > len(data):
                continue
            for i in range(shnum):  # the image ends after its last section's bytes too
                h = at + shoff + i * shentsize
                kind, = struct.unpack_from("<I", data, h + 4)
                offset, length = struct.unpack_from("<QQ", data, h + 0x18)
                if kind != 8:  # SHT_NOBITS takes no bytes in the file
                    size = max(size, offset + length)
            end = at + size
            if end > len(data):
                continue
            images += 1
            path = os.path.join(out, f"image{images}.cubin")
            open(path, "wb").write(data[at:end])
            sass = ""
            for tool in (["cuobjdump", "-sass"], ["nvdisasm"]):
                exe = os.path.join(bindir, tool[0])
                if not os.path.exists(exe):
                    continue
                r = subprocess.run([exe, *tool[1:], path], capture_output=True, text=True)
                if r.returncode == 0 and r.stdout.strip():
                    sass = r.stdout
                    break
            open(path[:-6] + ".sass", "w").write(sass)
            ops = Counter(re.findall(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]+)", sass))
            print(f"{name} @ {at}: {end - at} bytes, {sum(ops.values())} instructions; "
                  + ", ".join(f"{k} {v}" for k, v in ops.most_common(12)))
print(f"{images} ELF images found in {cache}")
