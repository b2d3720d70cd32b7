// Whether a shared object exports a symbol, read from its ELF dynamic symbol table without loading it:
// a file in a plugin folder that is not a baton plugin is recognised without running any of its code
// (library constructors run as soon as a file is opened with dlopen).
#pragma once

#include <optional>
#include <string>

namespace baton {

// true or false when the file's section headers could be read; nullopt when the file is not an ELF
// shared object this reader understands (no section headers, an unknown class or byte order), in which
// case the caller must find out another way.
std::optional<bool> elf_exports_symbol(const std::string& path, const std::string& symbol);

}  // namespace baton
