// The file-system calls the runtime makes in every process (finding the config file and the plugin
// folders, listing them, reading the crash journal's folder, making it, removing a record), as the POSIX
// calls they are. Not std::filesystem: its code lies in libstdc++ pages of its own, which each process
// would fault in (128 KB of resident memory) for these few calls; the rare paths (a config file's relative
// plugin folders, isolated plugins) keep it.
#ifndef BATON_POSIX_FILES_H
#define BATON_POSIX_FILES_H

#include <string>
#include <vector>

namespace baton {

// The names in `dir` (not "." or ".."), in the order the system gives them; none when it cannot be read.
std::vector<std::string> directory_names(const std::string& dir);
// Whether `path` is a regular file, or a folder (symbolic links followed).
bool is_regular_file(const std::string& path);
bool is_directory(const std::string& path);
// Makes `dir` and the folders above it that are missing (mode 0755); false if it is not a folder after.
bool make_directories(const std::string& dir);
// The absolute path of `path` with every symbolic link, "." and ".." resolved (realpath); "" when it
// does not exist or cannot be resolved.
std::string real_path(const std::string& path);
// Removes a file; false (errno set) if it could not.
bool remove_file(const std::string& path);

}  // namespace baton

#endif  // BATON_POSIX_FILES_H
