// Whether code may be loaded from a path: the user's own, and writable by nobody else.
#pragma once

#include <string>
#include <system_error>

namespace nanocuda {

// Why code must not be loaded from `path` (a folder, or a file, whose symbolic link is not
// followed), "" when it may: owned by another uid than this process's, writable by group or
// others, not a folder/regular file, or missing. Used for the compile cache's folder and
// entries and the torch bridge's library (which run code in this process).
[[nodiscard]] std::string cache_trust_problem(const std::string& path);
// The same for a file already open as `fd`, so the file checked is the file read.
[[nodiscard]] std::string cache_trust_problem(int fd, const std::string& path);
// Creates `dir` with mode 0700 if it is missing (its parents with the usual mode); an
// existing folder is left as it is. Errors go to `ec`.
void create_private_directory(const std::string& dir, std::error_code& ec);

}  // namespace nanocuda
