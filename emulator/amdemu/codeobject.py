"""AMD GPU code objects (ELF, code-object v5) as the emulator harness needs them.

    co = CodeObject(open("kernels_mma.mma_amd_check.co", "rb").read())
    k = co.kernel(r"mma_fwd.*GFX11_WMMA.*F16ELi64E")     # one kernel, by a regex on its symbol
    k.descriptor.rsrc2, k.descriptor.kernel_code_entry_byte_offset, k.args, k.kernarg_size
    image = co.image()                                     # loadable segments at their vaddr

Nothing here needs the emulator: it reads the ELF headers, the dynamic symbols, the metadata note
(msgpack, NT_AMDGPU_METADATA) and the 64-byte kernel descriptors, and lays the loadable segments out
as the loader would (relative relocations applied against a base the caller gives).
"""
import re
import struct

NT_AMDGPU_METADATA = 32
R_AMDGPU_RELATIVE64 = 13
EM_AMDGPU = 224


class CodeObjectError(ValueError):
    pass


def msgpack_unpack(data):
    """A msgpack decoder for the value kinds code-object metadata uses. Returns (value, bytes used)."""
    def read(i):
        b = data[i]
        if b <= 0x7F:
            return b, i + 1
        if 0x80 <= b <= 0x8F:
            return read_map(i + 1, b & 0x0F)
        if 0x90 <= b <= 0x9F:
            return read_array(i + 1, b & 0x0F)
        if 0xA0 <= b <= 0xBF:
            n = b & 0x1F
            return data[i + 1:i + 1 + n].decode(), i + 1 + n
        if b >= 0xE0:
            return b - 0x100, i + 1
        if b == 0xC0:
            return None, i + 1
        if b == 0xC2:
            return False, i + 1
        if b == 0xC3:
            return True, i + 1
        fixed = {0xCC: "B", 0xCD: ">H", 0xCE: ">I", 0xCF: ">Q", 0xD0: "b", 0xD1: ">h", 0xD2: ">i", 0xD3: ">q",
                 0xCA: ">f", 0xCB: ">d"}
        if b in fixed:
            fmt = fixed[b]
            n = struct.calcsize(fmt)
            return struct.unpack_from(fmt, data, i + 1)[0], i + 1 + n
        sized = {0xD9: (1, "str"), 0xDA: (2, "str"), 0xDB: (4, "str"), 0xC4: (1, "bin"), 0xC5: (2, "bin"),
                 0xC6: (4, "bin"), 0xDC: (2, "array"), 0xDD: (4, "array"), 0xDE: (2, "map"), 0xDF: (4, "map")}
        if b in sized:
            w, kind = sized[b]
            n = int.from_bytes(data[i + 1:i + 1 + w], "big")
            j = i + 1 + w
            if kind == "str":
                return data[j:j + n].decode(), j + n
            if kind == "bin":
                return bytes(data[j:j + n]), j + n
            return (read_array if kind == "array" else read_map)(j, n)
        raise CodeObjectError(f"msgpack: unsupported type byte 0x{b:02x} at {i}")

    def read_array(i, n):
        out = []
        for _ in range(n):
            v, i = read(i)
            out.append(v)
        return out, i

    def read_map(i, n):
        out = {}
        for _ in range(n):
            k, i = read(i)
            v, i = read(i)
            out[k] = v
        return out, i

    return read(0)


class KernelDescriptor:
    """The 64-byte kernel descriptor (<kernel>.kd) of code-object v3 and later."""
    SIZE = 64

    def __init__(self, raw):
        if len(raw) != self.SIZE:
            raise CodeObjectError(f"kernel descriptor: {len(raw)} bytes, expected 64")
        (self.group_segment_fixed_size, self.private_segment_fixed_size, self.kernarg_size) = struct.unpack_from("<III", raw, 0)
        self.kernel_code_entry_byte_offset = struct.unpack_from("<q", raw, 16)[0]
        self.rsrc3, self.rsrc1, self.rsrc2 = struct.unpack_from("<III", raw, 44)
        self.kernel_code_properties = struct.unpack_from("<H", raw, 56)[0]
        self.kernarg_preload = struct.unpack_from("<H", raw, 58)[0]

    @property
    def user_sgpr_count(self):
        return (self.rsrc2 >> 1) & 0x1F


class Kernel:
    def __init__(self, name, kd_addr, descriptor, meta):
        self.name, self.kd_addr, self.descriptor, self.meta = name, kd_addr, descriptor, meta
        self.args = meta.get(".args", [])
        self.kernarg_size = meta.get(".kernarg_segment_size", descriptor.kernarg_size)
        self.wavefront_size = meta.get(".wavefront_size")


class CodeObject:
    def __init__(self, data):
        self.data = bytes(data)
        d = self.data
        if d[:4] != b"\x7fELF" or d[4] != 2 or d[5] != 1:
            raise CodeObjectError("not a little-endian ELF64 file")
        (self.e_type, self.e_machine) = struct.unpack_from("<HH", d, 16)
        if self.e_machine != EM_AMDGPU:
            raise CodeObjectError(f"e_machine {self.e_machine}: not an AMDGPU code object (expected {EM_AMDGPU})")
        self.abi_version = d[8]
        self.e_flags = struct.unpack_from("<I", d, 48)[0]
        phoff, shoff = struct.unpack_from("<QQ", d, 32)
        phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack_from("<HHHHH", d, 54)
        self.segments = []  # (type, offset, vaddr, filesz, memsz)
        for i in range(phnum):
            p_type, _flags, off, vaddr, _paddr, filesz, memsz, _align = struct.unpack_from("<IIQQQQQQ", d, phoff + i * phentsize)
            self.segments.append((p_type, off, vaddr, filesz, memsz))
        self.sections = []
        for i in range(shnum):
            name, sh_type, _fl, addr, off, size, link, _info, _al, entsize = struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize)
            self.sections.append(dict(name_off=name, type=sh_type, addr=addr, offset=off, size=size, link=link, entsize=entsize))
        if shnum:
            strtab = self.sections[shstrndx]
            for s in self.sections:
                s["name"] = self._cstr(strtab["offset"] + s["name_off"])
        self.symbols = self._symbols()
        self.metadata = self._metadata()
        self.kernels = self._kernels()

    def _cstr(self, off):
        end = self.data.index(b"\0", off)
        return self.data[off:end].decode()

    def section(self, name):
        for s in self.sections:
            if s.get("name") == name:
                return s
        return None

    def _symbols(self):
        out = {}
        for tab, strs in ((".dynsym", ".dynstr"), (".symtab", ".strtab")):
            st, ss = self.section(tab), self.section(strs)
            if not st or not ss:
                continue
            for i in range(st["size"] // 24):
                name, _info, _other, _shndx, value, size = struct.unpack_from("<IBBHQQ", self.data, st["offset"] + 24 * i)
                if name:
                    out.setdefault(self._cstr(ss["offset"] + name), (value, size))
        return out

    def _metadata(self):
        for s in self.sections:
            if s["type"] != 7:  # SHT_NOTE
                continue
            i, end = s["offset"], s["offset"] + s["size"]
            while i + 12 <= end:
                namesz, descsz, ntype = struct.unpack_from("<III", self.data, i)
                name = self.data[i + 12:i + 12 + namesz].rstrip(b"\0").decode(errors="replace")
                desc = i + 12 + ((namesz + 3) & ~3)
                if name == "AMDGPU" and ntype == NT_AMDGPU_METADATA:
                    return msgpack_unpack(self.data[desc:desc + descsz])[0]
                i = desc + ((descsz + 3) & ~3)
        raise CodeObjectError("no AMDGPU metadata note (NT_AMDGPU_METADATA): code-object v3 or later is needed")

    def _kernels(self):
        out = {}
        for m in self.metadata.get("amdhsa.kernels", []):
            sym = m.get(".symbol") or (m[".name"] + ".kd")
            if sym not in self.symbols:
                raise CodeObjectError(f"kernel {m.get('.name')}: no symbol {sym}")
            addr, _size = self.symbols[sym]
            out[m[".name"]] = Kernel(m[".name"], addr, KernelDescriptor(self.read_vaddr(addr, 64)), m)
        return out

    def read_vaddr(self, vaddr, n):
        for p_type, off, va, filesz, _memsz in self.segments:
            if p_type == 1 and va <= vaddr and vaddr + n <= va + filesz:
                return self.data[off + vaddr - va:off + vaddr - va + n]
        raise CodeObjectError(f"address 0x{vaddr:x} (+{n}) is not in a loaded segment's file bytes")

    def kernel(self, pattern):
        """The one kernel whose name matches the regex; CodeObjectError naming the candidates otherwise."""
        hits = [k for n, k in self.kernels.items() if re.search(pattern, n)]
        if len(hits) != 1:
            raise CodeObjectError(f"{len(hits)} kernels match /{pattern}/ (need 1); kernels: {sorted(self.kernels)}")
        return hits[0]

    def image_size(self):
        return max((va + memsz for t, _o, va, _f, memsz in self.segments if t == 1), default=0)

    def image(self, base=0):
        """The loaded image: every PT_LOAD segment at its vaddr (bss zero), R_AMDGPU_RELATIVE64
        relocations applied for a load at `base`. Any other dynamic relocation is refused."""
        img = bytearray(self.image_size())
        for t, off, va, filesz, _memsz in self.segments:
            if t == 1:
                img[va:va + filesz] = self.data[off:off + filesz]
        for s in self.sections:
            if s["type"] != 4:  # SHT_RELA
                continue
            for i in range(s["size"] // 24):
                r_off, r_info, addend = struct.unpack_from("<QQq", self.data, s["offset"] + 24 * i)
                rtype = r_info & 0xFFFFFFFF
                if rtype != R_AMDGPU_RELATIVE64:
                    raise CodeObjectError(f"relocation type {rtype} at 0x{r_off:x}: only R_AMDGPU_RELATIVE64 is supported")
                struct.pack_into("<Q", img, r_off, (base + addend) & (2**64 - 1))
        return img
