#include "elf_symbols.h"

#include <elf.h>

#include <cstring>
#include <fstream>
#include <vector>

namespace baton {

namespace {

bool read_at(std::ifstream& f, uint64_t offset, void* out, size_t size) {
  f.seekg(static_cast<std::streamoff>(offset));
  f.read(static_cast<char*>(out), static_cast<std::streamsize>(size));
  return f.gcount() == static_cast<std::streamsize>(size);
}

template <typename Ehdr, typename Shdr, typename Sym>
std::optional<bool> exports(std::ifstream& f, uint64_t file_size, const std::string& symbol) {
  Ehdr eh{};
  if (!read_at(f, 0, &eh, sizeof eh)) return std::nullopt;
  if (eh.e_shoff == 0 || eh.e_shnum == 0 || eh.e_shentsize != sizeof(Shdr)) return std::nullopt;
  if (eh.e_shoff > file_size || uint64_t(eh.e_shnum) * sizeof(Shdr) > file_size - eh.e_shoff) return std::nullopt;
  std::vector<Shdr> sections(eh.e_shnum);
  if (!read_at(f, eh.e_shoff, sections.data(), sections.size() * sizeof(Shdr))) return std::nullopt;
  for (const Shdr& s : sections) {
    if (s.sh_type != SHT_DYNSYM) continue;
    if (s.sh_link >= sections.size() || s.sh_entsize != sizeof(Sym)) return std::nullopt;
    const Shdr& strtab = sections[s.sh_link];
    if (s.sh_offset > file_size || s.sh_size > file_size - s.sh_offset || strtab.sh_offset > file_size ||
        strtab.sh_size > file_size - strtab.sh_offset) {
      return std::nullopt;
    }
    std::vector<Sym> syms(s.sh_size / sizeof(Sym));
    std::vector<char> names(strtab.sh_size + 1, '\0');
    if (!read_at(f, s.sh_offset, syms.data(), syms.size() * sizeof(Sym)) ||
        !read_at(f, strtab.sh_offset, names.data(), strtab.sh_size)) {
      return std::nullopt;
    }
    for (const Sym& sym : syms) {
      // Defined (not an import), global or weak, a function or object, visible from outside.
      if (sym.st_shndx == SHN_UNDEF || sym.st_name >= strtab.sh_size) continue;
      const unsigned bind = sym.st_info >> 4;
      if (bind != STB_GLOBAL && bind != STB_WEAK) continue;
      if ((sym.st_other & 0x3) == STV_HIDDEN || (sym.st_other & 0x3) == STV_INTERNAL) continue;
      if (std::strcmp(&names[sym.st_name], symbol.c_str()) == 0) return true;
    }
    return false;
  }
  return false;  // section headers, but no dynamic symbols: it exports nothing
}

}  // namespace

std::optional<bool> elf_exports_symbol(const std::string& path, const std::string& symbol) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) return std::nullopt;
  const uint64_t size = static_cast<uint64_t>(f.tellg());
  unsigned char ident[EI_NIDENT] = {};
  if (!read_at(f, 0, ident, sizeof ident) || std::memcmp(ident, ELFMAG, SELFMAG) != 0) return std::nullopt;
  const bool little = ident[EI_DATA] == ELFDATA2LSB;
  const uint16_t probe = 1;
  const bool host_little = *reinterpret_cast<const uint8_t*>(&probe) == 1;
  if (little != host_little) return std::nullopt;
  if (ident[EI_CLASS] == ELFCLASS64) return exports<Elf64_Ehdr, Elf64_Shdr, Elf64_Sym>(f, size, symbol);
  if (ident[EI_CLASS] == ELFCLASS32) return exports<Elf32_Ehdr, Elf32_Shdr, Elf32_Sym>(f, size, symbol);
  return std::nullopt;
}

}  // namespace baton
